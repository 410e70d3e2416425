"""What a run costs (issue 22, item 4): every connector has a price, a case's cost counts
its judges and simulator, the summary totals it by role, and ``--max-cost`` stops starting
cases once the spend would pass the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from agentcli.eval.run.budget import CostBudget
from fixtures.openai_server import OpenAIServer, Reply
from tests.eval.reports.page import report_data, row_of

_register()
runner = CliRunner()

# US$ per million tokens: an agent reply of 1,000 + 500 tokens costs $0.002, a verdict of
# 3,000 + 100 tokens $0.0032.
PRICE = "{input_per_mtok: 1.0, output_per_mtok: 2.0}"
AGENT_USAGE = {"prompt_tokens": 1000, "completion_tokens": 500}
JUDGE_USAGE = {"prompt_tokens": 3000, "completion_tokens": 100}


@pytest.fixture
def server():
    with OpenAIServer(latency=0.0) as running:
        yield running


@pytest.fixture
def project(tmp_path, monkeypatch, server, no_proxies):
    """`greeter` and the `judge` validator both answer through the loopback server, at a
    price set in connectors.yml."""
    for name, connector in (("greeter", "loop"), ("judge", "loopjudge")):
        (tmp_path / "assistants" / name).mkdir(parents=True)
        (tmp_path / "assistants" / name / "package.yao").write_text(
            json.dumps({"name": name, "connector": connector})
        )
    base = server.base_url
    (tmp_path / "connectors.yml").write_text(
        f"loop: {{model: openai/my-finetune, api_base: '{base}', api_key: none, price: {PRICE}}}\n"
        f"loopjudge: {{model: openai/my-judge, api_base: '{base}', api_key: none, "
        f"price: {PRICE}}}\n"
        f"unpriced: {{model: openai/my-finetune, api_base: '{base}', api_key: none}}\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return path


def test_a_case_costs_its_agent_and_its_judges_and_the_summary_totals_them(project, server):
    judged = {"type": "agent", "use": "agents:judge", "value": "It greets"}
    write_cases(
        project / "cases.jsonl",
        [{"id": f"c{i}", "input": "hello", "assert": [judged]} for i in (1, 2)],
    )
    for verdict in ("true", "false"):  # --parallel 1: the agent answers, then its judge
        server.enqueue(Reply(text="hello there", usage=AGENT_USAGE))
        server.enqueue(Reply(text=f'{{"passed": {verdict}, "reason": "ok"}}', usage=JUDGE_USAGE))
    result = runner.invoke(app, ["eval", "greeter", "@cases.jsonl", "-o", "out.jsonl"])
    assert result.exit_code == 1, result.output  # c2's judge said no
    loaded = read_results(project / "out.jsonl")
    for case in loaded.results:
        assert case.trace is not None and case.trace.usage.cost == pytest.approx(0.002)
        assert case.helper_usage is not None
        judge = case.helper_usage["judge"]
        assert (judge.input_tokens, judge.output_tokens) == (3000, 100)
        assert judge.cost == pytest.approx(0.0032)
        assert case.cost == pytest.approx(0.0052)
    assert loaded.summary is not None
    assert loaded.summary.extra["cost"] == {"total": 0.0104, "agent": 0.004, "judge": 0.0064}
    assert "Cost:      $0.0104 (agent $0.0040, judge $0.0064)" in result.output
    for report in ("report.md", "report.html"):  # the reports show the same figures
        made = runner.invoke(app, ["report", "out.jsonl", "-o", report])
        assert made.exit_code == 0, made.output  # agent report exits 0 when it wrote
    markdown = (project / "report.md").read_text()
    assert "| Cost | $0.0104 (agent $0.0040, judge $0.0064) |" in markdown
    assert "**Cost**: $0.0052 (agent $0.0020, judge $0.0032)" in markdown  # the failed case
    html = (project / "report.html").read_text()
    assert "$0.0104 (agent $0.0040, judge $0.0064)" in html
    data = report_data(html)
    passed, _ = row_of(data, "c1")
    _, failed = row_of(data, "c2")
    assert failed is not None
    each = "$0.0052 (agent $0.0020, judge $0.0032)"
    assert passed[11] == each and failed["usage"]["cost"] == each


def test_max_cost_skips_the_rest_once_the_next_case_would_pass_the_limit(project, server):
    write_cases(project / "cases.jsonl", [{"id": f"c{i}", "input": "hi"} for i in range(10)])
    for _ in range(10):
        server.enqueue(Reply(text="hi", usage=AGENT_USAGE))
    result = runner.invoke(
        app, ["eval", "greeter", "@cases.jsonl", "--max-cost", "0.005", "-o", "out.jsonl"]
    )
    assert result.exit_code == 1, result.output  # a run cut short is no pass
    assert "Stopped at --max-cost $0.0050: $0.0040 spent, 8 runs skipped" in result.output
    loaded = read_results(project / "out.jsonl")
    statuses = [case.status for case in loaded.results]
    assert statuses == ["passed"] * 2 + ["skipped"] * 8  # $0.002 each: a third would pass it
    assert loaded.results[-1].error == (
        "not run: --max-cost $0.0050 would be exceeded ($0.0040 spent, $0.0020 a case)"
    )
    assert len(server.requests) == 2  # the skipped cases called nothing
    assert loaded.header.metadata["options"]["max_cost"] == 0.005


def test_max_cost_needs_a_price_for_every_connector_before_anything_runs(project, server):
    write_cases(project / "cases.jsonl", [{"id": "c1", "input": "hi"}])
    result = runner.invoke(
        app, ["eval", "greeter", "@cases.jsonl", "-c", "unpriced", "--max-cost", "1"]
    )
    assert result.exit_code == 2, result.output
    assert "--max-cost needs the price of connector 'unpriced' (openai/my-finetune)" in (
        result.output
    )
    assert "price: {input_per_mtok" in result.output and "Traceback" not in result.output
    assert server.requests == []


def test_offline_models_are_free_so_a_zero_limit_runs_everything(project):
    write_cases(project / "cases.jsonl", [{"id": f"c{i}", "input": "hi"} for i in range(3)])
    result = runner.invoke(
        app, ["eval", "greeter", "@cases.jsonl", "-c", "echo", "--max-cost", "0", "-o", "o.jsonl"]
    )
    assert result.exit_code == 0, result.output
    loaded = read_results(project / "o.jsonl")
    assert [case.status for case in loaded.results] == ["passed"] * 3
    assert all(case.trace is not None and case.trace.usage.cost == 0.0 for case in loaded.results)
    assert loaded.summary is not None and "cost" not in loaded.summary.extra  # free: as before
    assert "Cost:" not in result.output


def test_the_budget_projects_the_cases_in_flight_at_the_mean_cost() -> None:
    budget = CostBudget(limit=1.0)
    assert budget.refusal(in_flight=5) is None  # nothing known yet: start
    budget.add(0.2)
    assert budget.refusal(in_flight=3) is None  # 0.2 + 4 x 0.2 = 1.0: not past the limit
    refusal = budget.refusal(in_flight=4)  # 0.2 + 5 x 0.2 = 1.2
    assert refusal == (
        "not run: --max-cost $1.00 would be exceeded ($0.2000 spent, $0.2000 a case)"
    )
    assert budget.cut and budget.skipped == 1
    budget.add(None)  # a result that reported no cost counts as free
    assert budget.spent == pytest.approx(0.2) and budget.finished == 2


def test_estimate_prints_planned_calls_and_cost_and_runs_nothing(project, server):
    judged = {"type": "agent", "use": "agents:judge", "value": "It greets"}
    write_cases(
        project / "cases.jsonl",
        [{"id": f"c{i}", "input": "hello there", "assert": [judged]} for i in (1, 2, 3)],
    )
    result = runner.invoke(
        app, ["eval", "greeter", "@cases.jsonl", "--estimate", "--runs", "2", "-o", "x.jsonl"]
    )
    assert result.exit_code == 0, result.output
    assert server.requests == [] and not (project / "x.jsonl").exists()
    out = " ".join(result.output.split())
    assert "3 cases x 2 runs; tokens by tiktoken o200k_base" in out
    assert "256 output tokens assumed per reply" in out and "calls are a floor" in out
    # 6 agent calls of (prompt-less package) "hello there" = 2 tokens in, 256 out, at
    # $1 / $2 per M: 6 x (2 x 1 + 256 x 2) / 1e6 = $0.003084
    assert "agent: 6 calls, ~12 input + ~1,536 output tokens, ~$0.0031" in out, out
    assert "judge: 6 calls" in out and "Estimated cost: ~$0.00" in out


def test_estimate_names_connectors_without_a_price(project, server):
    write_cases(project / "cases.jsonl", [{"id": "c1", "input": "hi"}])
    result = runner.invoke(app, ["eval", "greeter", "@cases.jsonl", "-c", "unpriced", "--estimate"])
    assert result.exit_code == 0, result.output
    assert "no price for unpriced" in " ".join(result.output.split())


@pytest.mark.parametrize("matrix", [["-c", "loop", "-c", "dear"], ["--matrix", "loop,dear"]])
def test_estimate_of_a_matrix_estimates_every_column_and_totals_them(project, server, matrix):
    # The matrix's label ("loop, dear") was resolved as one connector: exit 2 on every matrix.
    base = server.base_url
    with (project / "connectors.yml").open("a") as file:  # ten times loop's price
        file.write(
            f"dear: {{model: openai/my-finetune, api_base: '{base}', api_key: none, "
            "price: {input_per_mtok: 10.0, output_per_mtok: 20.0}}\n"
        )
    judged = {"type": "agent", "use": "agents:judge", "value": "It greets"}
    write_cases(project / "cases.jsonl", [{"id": "c1", "input": "hello there", "assert": [judged]}])
    result = runner.invoke(app, ["eval", "greeter", "@cases.jsonl", *matrix, "--estimate"])
    assert result.exit_code == 0, result.output
    assert server.requests == []
    out = " ".join(result.output.split())
    assert "1 case x 1 run x 2 connectors; tokens by tiktoken o200k_base" in out
    # an agent call of 2 + 256 tokens: $0.000514 on loop, ten times that on dear
    assert "loop · agent: 1 call, ~2 input + ~256 output tokens, ~$0.0005" in out, out
    assert "dear · agent: 1 call, ~2 input + ~256 output tokens, ~$0.0051" in out, out
    # each column's judge runs on the judge's own connector (loopjudge): 261 + 64 tokens,
    # $0.000389, in both columns
    assert "loop · judge: 1 call, ~261 input + ~64 output tokens, ~$0.0004" in out, out
    assert "dear · judge: 1 call, ~261 input + ~64 output tokens, ~$0.0004" in out, out
    # loop $0.000903 + dear $0.005529
    assert "Estimated cost: ~$0.0064 (by connector: loop ~$0.0009 · dear ~$0.0055)" in out, out


def test_the_token_counter_uses_a_local_encoding_and_leaves_the_environment_alone(monkeypatch):
    import os

    from agentcli.eval.run.estimate import token_counter

    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    count, name = token_counter()
    assert name == "tiktoken o200k_base" and count("hello world") == 2
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/nonexistent-folder")  # a user's, without the file
    count, name = token_counter()
    assert name == "tiktoken o200k_base"  # litellm's bundled copy still serves
    assert os.environ["TIKTOKEN_CACHE_DIR"] == "/nonexistent-folder"


def test_max_cost_in_a_matrix_needs_a_price_for_every_column(project, server):
    write_cases(project / "cases.jsonl", [{"id": "c1", "input": "hi"}])
    result = runner.invoke(
        app,
        ["eval", "greeter", "@cases.jsonl", "-c", "loop", "-c", "unpriced", "--max-cost", "1"],
    )
    assert result.exit_code == 2, result.output
    assert "--max-cost needs the price of connector 'unpriced'" in result.output
    assert server.requests == []


def test_a_matrix_shows_what_each_connector_cost(project, server):
    base = server.base_url
    with (project / "connectors.yml").open("a") as file:  # ten times loop's price
        file.write(
            f"dear: {{model: openai/my-finetune, api_base: '{base}', api_key: none, "
            "price: {input_per_mtok: 10.0, output_per_mtok: 20.0}}\n"
        )
    write_cases(project / "cases.jsonl", [{"id": f"c{i}", "input": "hi"} for i in (1, 2)])
    for _ in range(4):
        server.enqueue(Reply(text="hi", usage=AGENT_USAGE))
    result = runner.invoke(
        app, ["eval", "greeter", "@cases.jsonl", "-c", "loop", "-c", "dear", "-o", "m.jsonl"]
    )
    assert result.exit_code == 0, result.output
    loaded = read_results(project / "m.jsonl")
    assert loaded.summary is not None
    cost = loaded.summary.extra["cost"]
    assert cost["by_connector"] == {"loop": 0.004, "dear": 0.04}
    assert cost["total"] == pytest.approx(0.044)
    assert "by connector: loop $0.0040 · dear $0.0400" in result.output
    made = runner.invoke(app, ["report", "m.jsonl", "-o", "m.md"])
    assert made.exit_code == 0, made.output
    assert "| Cost by connector | loop $0.0040 · dear $0.0400 |" in (project / "m.md").read_text()


def test_a_connector_s_price_is_looked_up_before_the_first_request(project, server, monkeypatch):
    # Reading litellm's cost map (~1 MB) at the first answer held up every case answering
    # with it; the run looks the price up while it checks its connectors instead.
    from agentcli.models import pricing

    read_with_requests_seen: list[int] = []
    real = pricing._cost_map_text

    def cost_map_text() -> str:
        read_with_requests_seen.append(len(server.requests))
        return real()

    pricing.litellm_price.cache_clear()
    monkeypatch.setattr(pricing, "_cost_map_text", cost_map_text)
    (project / "connectors.yml").write_text(
        f"loop: {{model: openai/gpt-4o, api_base: '{server.base_url}', api_key: none}}\n"
    )
    write_cases(project / "cases.jsonl", [{"id": f"c{i}", "input": "hello"} for i in range(4)])
    server.enqueue(*[Reply(text="hi", usage=AGENT_USAGE) for _ in range(4)])
    try:
        result = runner.invoke(
            app, ["eval", "greeter", "@cases.jsonl", "--parallel", "2", "-o", "out.jsonl"]
        )
    finally:
        pricing.litellm_price.cache_clear()  # priced through the wrapper: not for later tests
    assert result.exit_code == 0, result.output
    assert read_with_requests_seen and set(read_with_requests_seen) == {0}
    loaded = read_results(project / "out.jsonl")
    assert all(case.cost == pytest.approx(0.0075) for case in loaded.results)  # gpt-4o's price
