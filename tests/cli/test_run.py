"""`agent run`: one-shot, piped input, --json, options, errors, and the chat driven by
typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from tests.cli.imports import modules_after

ROOT = Path(__file__).resolve().parents[2]
ASSISTANTS = str(ROOT / "assistants")

_register()
runner = CliRunner()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Memory and sessions in tmp_path; cwd is tmp_path."""
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def run(*args: str, input: str | None = None):
    return runner.invoke(app, ["run", *args], input=input, catch_exceptions=False)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# -- one-shot -----------------------------------------------------------------------------


def test_one_shot_answer_on_stdout_tool_activity_on_stderr() -> None:
    result = run("expense", "Submit $500 travel expense", "--root", ASSISTANTS)
    assert result.exit_code == 0, result.output
    assert result.stdout == "Submitted expense EXP-0001: $500.00 for travel. Status: submitted.\n"
    assert "⚙ submit_expense (expense)\n" in result.stderr
    assert "✓ submit_expense (expense) (" in result.stderr


def test_verbose_shows_tool_arguments_and_results() -> None:
    result = run("expense", "submit $25 for lunch", "-v", "--root", ASSISTANTS)
    assert '⚙ submit_expense (expense) {"amount": 25.0, "category": "lunch"' in result.stderr
    assert '→ {"id": "EXP-0001", "amount": 25.0, "category": "meals"' in result.stderr


def test_piped_stdin_is_the_message() -> None:
    result = run("keyword", "--root", ASSISTANTS, input="Extract keywords from: AI and robots\n")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "keywords": ["AI", "robots"],
        "intent": "extract_keywords",
        "need_search": False,
    }


def test_json_events_are_ndjson_ending_with_the_reply() -> None:
    result = run("expense", "show my expenses", "--json", "--root", ASSISTANTS)
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start"
    assert {"turn_start", "message_update", "tool_execution_start", "turn_end"} <= set(kinds)
    reply = events[-1]
    assert reply["type"] == "reply"
    assert (reply["assistant_id"], reply["status"]) == ("expense", "done")
    assert reply["tool_calls"][0]["tool"] == "list_expenses"
    assert [n["label"] for n in reply["trace"]] == ["Create", "Next"]
    assert result.stderr == ""


def test_user_memory_persists_between_runs_and_is_per_user() -> None:
    assert run("expense", "Submit $80 hotel", "-u", "alice", "--root", ASSISTANTS).exit_code == 0
    alice = run("expense", "show my expenses", "-u", "alice", "--root", ASSISTANTS)
    assert "You have 1 expense(s) totaling $80.00: EXP-0001 $80.00 lodging." in alice.stdout
    bob = run("expense", "show my expenses", "-u", "bob", "--root", ASSISTANTS)
    assert "You have no expenses yet." in bob.stdout


def test_connector_override_and_connector_without_assistant() -> None:
    result = run("expense", "hello there", "-c", "echo", "--root", ASSISTANTS)
    assert result.stdout == "hello there\n"
    bare = run("-c", "echo", "just a connector")
    assert (bare.exit_code, bare.stdout) == (0, "just a connector\n")
    piped = run("-c", "echo", input="from a pipe\n")
    assert piped.stdout == "from a pipe\n"


IDENTITY = {
    "package.yao": '{"name": "Who", "connector": "echo"}',
    "src/index.py": "def Create(ctx, messages):\n    ctx.send('working')\n\n"
    "def Next(ctx, payload):\n"
    "    return {'data': {'user': ctx.user_id, 'team': ctx.team_id, 'locale': ctx.locale,"
    " 'chat': ctx.chat_id, 'metadata': ctx.metadata, 'authorized': ctx.authorized}}\n",
}


def test_ctx_file_with_cli_overrides_and_next_data_printed(tmp_path: Path) -> None:
    write(tmp_path / "assistants" / "who", IDENTITY)
    ctx = tmp_path / "ctx.json"
    ctx.write_text(
        json.dumps(
            {
                "chat_id": "chat-7",
                "locale": "fr",
                "authorized": {"user_id": "u-ctx", "team_id": "t-ctx", "scope": "all"},
                "metadata": {"mode": "test"},
            }
        )
    )
    result = run("who", "hi", "--ctx", str(ctx), "-u", "u-cli", "--locale", "zh-cn")
    assert result.exit_code == 0, result.output
    answer, data = result.stdout.split("\n", 1)
    assert answer == "hi"
    assert json.loads(data) == {
        "user": "u-cli",
        "team": "t-ctx",
        "locale": "zh-cn",
        "chat": "chat-7",
        "metadata": {"mode": "test"},
        "authorized": {"user_id": "u-ctx", "team_id": "t-ctx", "scope": "all"},
    }
    assert "» working" in result.stderr


def test_bad_ctx_file_is_a_one_line_error(tmp_path: Path) -> None:
    write(tmp_path / "assistants" / "who", IDENTITY)
    (tmp_path / "ctx.json").write_text('{"chat_id": "x",\n  oops}')
    result = run("who", "hi", "--ctx", "ctx.json")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ctx.json:2:")
    assert "Traceback" not in result.output


# -- errors and exit codes ----------------------------------------------------------------


def test_unknown_assistant_exits_2_with_a_suggestion() -> None:
    result = run("expens", "hi", "--root", ASSISTANTS)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown assistant 'expens'")
    assert "did you mean expense" in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_no_message_and_no_connector_are_usage_errors(home: Path) -> None:
    assert run("--root", ASSISTANTS).exit_code == 2
    nothing = run("expense", "--root", ASSISTANTS, input="")
    assert (nothing.exit_code, nothing.stderr.startswith("error: no message given")) == (2, True)
    chat_json = run("expense", "--chat", "--json", "--root", ASSISTANTS, input="hi\n")
    assert chat_json.exit_code == 2 and "--json needs a message" in chat_json.stderr
    assert not (home / "sessions").exists()  # no session was started


def test_failed_turns_and_hook_errors_exit_1(tmp_path: Path) -> None:
    write(
        tmp_path / "assistants" / "broken",
        {
            "package.yao": '{"name": "B", "connector": "python:m:reply"}',
            "src/m.py": "def reply(messages, tools, settings):\n    raise RuntimeError('down')\n",
        },
    )
    failed = run("broken", "hi")
    assert failed.exit_code == 1
    assert "error: python model python:m:reply raised RuntimeError: down" in failed.stderr
    write(
        tmp_path / "assistants" / "hooked",
        {
            "package.yao": '{"name": "H", "connector": "echo"}',
            "src/index.py": "def Create(ctx, messages):\n    return 42\n",
        },
    )
    hooked = run("hooked", "hi")
    assert hooked.exit_code == 1
    assert "must return a dict or None, not int" in hooked.stderr
    assert "Traceback" not in hooked.output


# -- chat through CliRunner ---------------------------------------------------------------


def test_chat_session_with_save_and_exit(tmp_path: Path, home: Path) -> None:
    result = run("expense", "--chat", "--root", ASSISTANTS, input="hello\n/save out.jsonl\nexit\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Chatting with expense (scripted)"
    assert lines[1].startswith("Type /help for commands")
    assert lines[2].startswith("Session expense-") and "(new)" in lines[2]
    assert "> hello" in lines
    assert any(line.startswith("Hello! I'm your expense assistant.") for line in lines)
    (case_line,) = (tmp_path / "out.jsonl").read_text().splitlines()
    case = json.loads(case_line)
    assert case["input"] == "hello"
    assert case["id"].startswith("expense-") and case["id"].endswith("-1")
    assert case["description"].startswith("saved from chat session expense-")
    assert case["assert"] == [
        {"type": "trajectory", "value": []},
        {
            "type": "contains",
            "value": "Hello! I'm your expense assistant. I can submit an expense, list your "
            "expenses, or set up the expense system.",
        },
    ]
    assert f"(saved case {case['id']} to {tmp_path / 'out.jsonl'})" in lines
    (log,) = (home / "sessions").glob("expense-*.jsonl")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries[0]["data"]["type"] == "session"
    assert [e["data"]["role"] for e in entries if e["type"] == "message"] == [
        "user",
        "assistant",
    ]


def test_multi_turn_chat_with_multiline_input_and_save_as_a_message_list(
    tmp_path: Path,
) -> None:
    lines = "Submit an expense\n!multi\nTravel,\n$500\n!end\nyes\n/save cases/c.jsonl\n"
    result = run("expense", "--chat", "-v", "--root", ASSISTANTS, input=lines)
    assert result.exit_code == 0, result.output
    assert "Please confirm: $500 travel expense." in result.stdout
    assert '⚙ submit_expense (expense) {"amount": 500.0, "category": "travel"' in result.stdout
    assert "Submitted expense EXP-0001: $500.00 for travel." in result.stdout
    case = json.loads((tmp_path / "cases" / "c.jsonl").read_text())
    assert [m["role"] for m in case["input"]] == ["user", "assistant", "user", "assistant", "user"]
    assert case["input"][2]["content"] == "Travel,\n$500"
    assert case["input"][-1]["content"] == "yes"
    trajectory, contains = case["assert"]
    assert trajectory["type"] == "trajectory"
    assert [call["name"] for call in trajectory["value"]] == ["submit_expense"]
    assert trajectory["value"][0]["arguments"]["amount"] == 500
    assert contains == {
        "type": "contains",
        "value": "Submitted expense EXP-0001: $500.00 for travel. Status: submitted.",
    }


def test_chat_commands_reset_help_unknown_and_quit(tmp_path: Path) -> None:
    result = run(
        "coffee",
        "--chat",
        "--root",
        ASSISTANTS,
        input="a latte\n/reset\nmedium\n/help\n/nope\n/save\n   \nquit\n",
    )
    assert result.exit_code == 0
    out = result.stdout
    assert "(conversation forgotten)" in out
    # after /reset the drink named before is forgotten
    assert "Let me confirm: a medium coffee. Is that correct?" in out
    assert "/reset forgets the conversation" in out
    assert "unknown command /nope; try /help" in out
    assert "usage: /save FILE" in out


def test_save_before_anything_was_said(tmp_path: Path) -> None:
    result = run("coffee", "--chat", "--root", ASSISTANTS, input="/save x.jsonl\n")
    assert "error: nothing to save yet" in result.stdout
    assert not (tmp_path / "x.jsonl").exists()


def test_named_session_is_resumed_and_continue_picks_the_latest(home: Path) -> None:
    first = run("coffee", "--session", "order-1", "--chat", "--root", ASSISTANTS, input="a mocha\n")
    assert "Session order-1 (new)" in first.stdout
    again = run("coffee", "--session", "order-1", "--chat", "--root", ASSISTANTS, input="large\n")
    assert "Session order-1 (resumed, 2 messages)" in again.stdout
    assert "Let me confirm: a large mocha. Is that correct?" in again.stdout
    latest = run("--continue", "--chat", "--root", ASSISTANTS, input="yes\n")
    assert latest.exit_code == 0, latest.output
    assert "Chatting with coffee (scripted)" in latest.stdout
    assert "Your order is confirmed: a large mocha." in latest.stdout
    one_shot = run("coffee", "--session", "order-1", "no", "--root", ASSISTANTS)
    assert one_shot.stdout.startswith("Sorry about that!")
    assert (home / "sessions" / "order-1.jsonl").is_file()
    # The session knows its assistant: the one argument is the message, as with --continue.
    bare = run("--session", "order-1", "a latte", "--root", ASSISTANTS)
    assert bare.exit_code == 0, bare.output
    assert bare.stdout.startswith("A latte, great choice.")
    unknown = run("--session", "order-9", "a latte", "--root", ASSISTANTS)
    assert unknown.exit_code == 2 and "unknown assistant 'a latte'" in unknown.stderr


def test_a_resumed_session_keeps_its_connector_and_shows_the_last_turns(home: Path) -> None:
    said = "one\ntwo\nthree\nfour\n"
    first = run(
        "coffee", "--session", "s", "-c", "echo", "--chat", "--root", ASSISTANTS, input=said
    )
    assert first.stdout.startswith("Chatting with coffee (echo)\n")
    again = run("--continue", "--chat", "--root", ASSISTANTS, input="five\n")
    assert again.exit_code == 0, again.output
    lines = again.stdout.splitlines()
    assert lines[0] == "Chatting with coffee (echo)"  # not the package's scripted connector
    assert lines[2] == f"Session s (resumed, 8 messages): {home / 'sessions' / 's.jsonl'}"
    assert lines[3:11] == [
        "(… 1 earlier turn)",
        "> two",
        "two",
        "> three",
        "three",
        "> four",
        "four",
        "> five",
    ]
    one_shot = run("--continue", "six", "--root", ASSISTANTS)
    assert one_shot.stdout == "six\n"  # echo again, without -c
    # -c on a resumed session switches it, from then on.
    switched = run("--continue", "a latte", "-c", "scripted", "--root", ASSISTANTS)
    assert switched.stdout.startswith("A latte, great choice.")
    kept = run("--continue", "--chat", "--root", ASSISTANTS, input="")
    assert kept.stdout.startswith("Chatting with coffee (scripted)\n")


def test_session_errors() -> None:
    bad = run("coffee", "--session", "../x", "hi", "--root", ASSISTANTS)
    assert bad.exit_code == 2 and "invalid session name" in bad.stderr
    nothing = run("--continue", "hi", "--root", ASSISTANTS)
    assert nothing.exit_code == 2 and "no session to continue" in nothing.stderr
    run("coffee", "--session", "mine", "hi", "--root", ASSISTANTS)
    other = run("expense", "--session", "mine", "hi", "--root", ASSISTANTS)
    assert other.exit_code == 2 and "belongs to assistant 'coffee'" in other.stderr


def test_hook_messages_and_errors_in_the_chat_do_not_end_it(tmp_path: Path) -> None:
    write(
        tmp_path / "assistants" / "moody",
        {
            "package.yao": '{"name": "Moody", "connector": "echo"}',
            "src/index.py": "def Create(ctx, messages):\n"
            "    if messages[-1]['content'] == 'fail':\n        raise ValueError('bad mood')\n"
            "    m = ctx.send_stream('thinking')\n    ctx.append(m, '...')\n    ctx.end(m)\n",
        },
    )
    result = run("moody", "--chat", input="hi\nfail\nstill here\n")
    assert result.exit_code == 0
    out = result.stdout
    assert "» thinking...\nhi\n" in out
    assert "error: hook " in out and "ValueError: bad mood" in out
    assert "still here\n" in out


def test_expense_next_hook_answers_structured_data_on_request(tmp_path: Path) -> None:
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps({"metadata": {"format": "json"}}))
    result = run("expense", "show my expenses", "--ctx", str(ctx), "--root", ASSISTANTS)
    answer, data = result.stdout.split("\n", 1)
    assert answer == "You have no expenses yet."
    structured = json.loads(data)
    assert structured["status"] == "success"
    assert structured["tools"] == [
        {"name": "list_expenses", "result": {"expenses": [], "count": 0, "total": 0}}
    ]


# -- layers ---------------------------------------------------------------------------------


def test_run_cmd_imports_nothing_of_eval() -> None:
    import ast

    source = ROOT / "agentcli" / "cli" / "run_cmd.py"
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert "agentcli.assistant.identity" in imported  # the walk sees the lazy imports too
    assert [name for name in imported if name and name.startswith("agentcli.eval")] == []


def test_a_run_with_ctx_and_identity_flags_loads_no_eval_module(tmp_path: Path) -> None:
    write(tmp_path / "assistants" / "who", IDENTITY)
    (tmp_path / "ctx.json").write_text('{"chat_id": "c", "authorized": {"user_id": "u"}}')
    args = ["run", "who", "hi", "--ctx", "ctx.json", "-t", "t", "--locale", "fr"]
    assert modules_after(args, tmp_path, "agentcli.eval") == []
    assert "agentcli.assistant.identity" in modules_after(args, tmp_path, "agentcli.assistant")


def test_a_bare_openai_compatible_connector_closes_its_connections(tmp_path: Path) -> None:
    # `agent run -c <alias>` printed aiohttp's "Unclosed client session" after every turn
    import os
    import subprocess
    import sys

    from fixtures.openai_server import OpenAIServer

    with OpenAIServer() as server:
        (tmp_path / "connectors.yml").write_text(
            f"loc: {{model: openai/m, api_base: '{server.base_url}', api_key: none}}\n"
        )
        env = {**os.environ, "AGENTCLI_HOME": str(tmp_path / "home")}
        argv = [sys.executable, "-m", "agentcli", "run", "-c", "loc", "hi there"]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hi there"
    assert done.stderr == ""
