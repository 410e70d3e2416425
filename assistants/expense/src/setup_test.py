"""Script tests of the expense assistant's functions: ``agent eval expense --scripts setup``
(or ``agent eval -i scripts.expense.setup``; ``--run Submit`` picks tests by name).

Each ``Test*`` function gets ``t`` (``t.log/error/fail/fatal/skip`` and ``t.assert_``, the
seed's ``t.assert``; Go-style names such as ``t.assert_.Equal`` work too) and ``ctx``, a real
context of this assistant (``ctx.memory``, ``ctx.agent.call`` ...). Tools take the same ``ctx``
they get in a conversation, so these tests exercise the expense store of the ``-u`` user.
"""

from agentcli.eval.run.scripts import src_import

tools = src_import(__file__, "tools")


def TestSystemReady(t, ctx):
    result = tools.Setup({"action": "init"}, ctx)
    t.assert_.true(result["success"], "Should succeed")
    t.assert_.equal(result["status"], "ready", "Status should be ready")
    t.assert_.not_nil(result.get("data"), "Data should not be nil")
    t.assert_.contains(result["categories"], "travel")


def TestCategories(t, ctx):
    t.assert_.equal(tools.category_of("Lunch"), "meals")
    t.assert_.equal(tools.category_of("hotel"), "lodging")
    t.assert_.equal(tools.category_of("spaceship"), "other")


def TestSubmitAndList(t, ctx):
    before = tools.ListExpenses({}, ctx)["count"]
    expense = tools.SubmitExpense({"amount": "42.5", "category": "taxi"}, ctx)
    t.log("submitted", expense["id"])
    t.assert_.match(expense["id"], r"^EXP-\d{4}$")
    t.assert_.json_path(expense, "$.category", "travel")
    listed = tools.ListExpenses({"category": "travel"}, ctx)
    t.assert_.greater_or_equal(listed["total"], 42.5)
    t.assert_.equal(tools.ListExpenses({}, ctx)["count"], before + 1)


def TestRejectsZeroAmount(t, ctx):
    t.assert_.panic(lambda: tools.SubmitExpense({"amount": 0}, ctx), "zero must be refused")
    t.assert_.no_panic(lambda: tools.category_of(None))


async def TestWithAgentAssertion(t, ctx):
    answer = await ctx.agent.call("expense", "Submit expense")
    if answer["error"]:
        t.fatal(f"the assistant failed: {answer['error']}")
    # Static assertion
    t.assert_.contains(answer["content"], "type")
    # Agent-driven assertion (the validator assistant judges the answer)
    await t.assert_.agent(
        answer["content"],
        "tests.validator-agent",
        {"criteria": "Response should ask a question about the expense 'category'"},
    )
