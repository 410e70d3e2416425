"""Record and replay (issue 15): a run recorded against the loopback OpenAI-compatible
server and real MCP server processes (stdio and streamable HTTP) replays with every server
gone and gives the same results; a replay that asks for something else says what differs;
no key reaches a cassette."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from fixtures.openai_server import OpenAIServer
from fixtures.weather_server import free_port, weather_server

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "assistants" / "weather"
PLANTED = "sk-planted-cassette-key-0123456789abcdef"

_register()
runner = CliRunner()


@pytest.fixture
def http_weather() -> Iterator[str]:
    """The weather example's MCP server over streamable HTTP on 127.0.0.1: its URL."""
    with weather_server("http") as url:
        yield url


@pytest.fixture
def project(tmp_path, monkeypatch):
    """Two copies of the weather example: `wstdio` (its stdio server) and `whttp` (a
    remote server), both answered by the `loop` connector; cwd is the project."""
    for name in ("wstdio", "whttp"):
        shutil.copytree(
            WEATHER, tmp_path / "assistants" / name, ignore=shutil.ignore_patterns("tests")
        )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def configure(project: Path, base_url: str, http_url: str) -> None:
    """Point both packages at the loopback server; `whttp` at the HTTP MCP server."""
    (project / "connectors.yml").write_text(
        f"loop: {{model: openai/tools, api_base: '{base_url}', api_key: '{PLANTED}'}}\n"
        f"keyecho: {{model: openai/authecho, api_base: '{base_url}', api_key: '{PLANTED}'}}\n"
    )
    for name, server in (("wstdio", "weather"), ("whttp", "remote")):
        package = {"name": name, "connector": "loop", "mcp": {"servers": [server]}}
        (project / f"assistants/{name}/package.yao").write_text(json.dumps(package))
    remote = {"transport": "http", "url": http_url, "timeout": 10}
    (project / "assistants/whttp/mcps/remote.mcp.yao").write_text(json.dumps(remote))
    (project / "assistants/whttp/mcps/weather.mcp.yao").unlink()


CASES = [
    {
        "id": "london",
        "input": "London",
        "assert": [
            {"type": "tool_called", "value": "get_forecast"},
            {"type": "contains", "value": "London"},
        ],
    },
    {"id": "mars", "input": "Mars", "assert": {"type": "contains", "value": "unknown city"}},
]


def write_cases(project: Path, name: str, cases: list[dict[str, Any]]) -> str:
    path = project / name / "cases.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return f"@{name}/cases.jsonl"


def evaluate(assistant: str, cases: str, *args: str, output: str):
    return runner.invoke(
        app, ["eval", assistant, cases, "-o", output, *args], catch_exceptions=False
    )


def comparable(path: Path) -> list[dict[str, Any]]:
    """What a replay must reproduce: statuses, outputs, errors, assertions, tool calls."""
    kept = []
    for result in read_results(path).results:
        trace = result.trace
        kept.append(
            {
                "id": result.id,
                "status": result.status,
                "output": result.output,
                "error": result.error,
                "assertions": [a.to_dict() for a in result.assertions],
                "tool_calls": [c.to_dict() for c in trace.tool_calls] if trace else None,
                "usage": trace.usage.to_dict() if trace else None,
            }
        )
    return kept


def test_a_recorded_run_replays_with_every_server_gone(project, http_weather):
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        stdio_cases = write_cases(project, "stdio", CASES)
        http_cases = write_cases(project, "http", CASES)
        recorded = evaluate("wstdio", stdio_cases, "--record", output="stdio/rec.jsonl")
        assert recorded.exit_code == 0, recorded.output
        recorded = evaluate("whttp", http_cases, "--record", output="http/rec.jsonl")
        assert recorded.exit_code == 0, recorded.output
        calls_while_recording = len(server.requests)
    assert calls_while_recording == 8  # two model calls per case, two cases, two packages
    for folder in ("stdio", "http"):
        names = sorted(p.name for p in (project / folder / "cassettes").iterdir())
        assert names == ["london.jsonl", "mars.jsonl"]
    # Every server is gone: the loopback model server (its `with` ended), the HTTP MCP
    # server below, and the stdio one cannot even start.
    (project / "assistants/wstdio/mcps/server.py").unlink()
    (project / "assistants/whttp/mcps/remote.mcp.yao").write_text(
        json.dumps({"transport": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"})
    )
    for assistant, folder in (("wstdio", "stdio"), ("whttp", "http")):
        replayed = evaluate(
            assistant, f"@{folder}/cases.jsonl", "--replay", output=f"{folder}/rep.jsonl"
        )
        assert replayed.exit_code == 0, replayed.output
        assert comparable(project / folder / "rep.jsonl") == comparable(
            project / folder / "rec.jsonl"
        )
    london = comparable(project / "stdio" / "rep.jsonl")[0]
    assert london["tool_calls"][0]["tool"] == "get_forecast"
    assert "London" in london["output"]


def test_a_replay_that_asks_for_something_else_names_the_first_difference(project, http_weather):
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        cases = write_cases(project, "stdio", CASES[:1])
        assert evaluate("wstdio", cases, "--record", output="stdio/rec.jsonl").exit_code == 0
    changed = write_cases(project, "stdio", [{**CASES[0], "input": "london"}])
    replayed = evaluate("wstdio", changed, "--replay", output="stdio/rep.jsonl")
    assert replayed.exit_code == 1
    (result,) = read_results(project / "stdio" / "rep.jsonl").results
    assert result.status == "error"
    assert (result.error or "").splitlines() == [
        "[replay_miss] the call to loop is not in stdio/cassettes/london.jsonl: "
        "messages[0].content differs: 'London' vs 'london'",
        "  hint: record the case again with --record",
    ]
    missing = write_cases(project, "stdio", [{"id": "paris", "input": "Paris"}])
    replayed = evaluate("wstdio", missing, "--replay", output="stdio/rep.jsonl")
    (result,) = read_results(project / "stdio" / "rep.jsonl").results
    assert result.status == "error" and "no cassette stdio/cassettes/paris.jsonl" in (
        result.error or ""
    )


def test_no_key_reaches_a_cassette(project, http_weather):
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        cases = write_cases(project, "keys", [{"id": "echo", "input": "who am I"}])
        ran = evaluate("wstdio", cases, "-c", "keyecho", "--record", output="keys/rec.jsonl")
        assert ran.exit_code == 0, ran.output
    text = (project / "keys/cassettes/echo.jsonl").read_text()
    assert "you sent [redacted]" in text  # the key went out and came back, redacted
    assert PLANTED not in text


def test_replay_needs_cassettes_and_not_both_modes(project):
    cases = write_cases(project, "none", CASES[:1])
    ran = evaluate("wstdio", cases, "--replay", output="none/rep.jsonl")
    assert ran.exit_code == 2 and "no cassettes to replay" in ran.output
    ran = evaluate("wstdio", cases, "--replay", "--record", output="none/rep.jsonl")
    assert ran.exit_code == 2 and "give --record or --replay, not both" in ran.output


def test_a_dynamic_case_and_a_judged_case_round_trip(tmp_path, monkeypatch):
    """The agent, the simulated user and the judge all answer from the cassette: with their
    models deleted, the replay gives the recorded results."""
    fixtures = ROOT / "fixtures" / "assistants"
    for name in ("barista", "sim"):
        shutil.copytree(fixtures / name, tmp_path / "assistants" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    rules = [["what can i get", "A latte please"], ["size", "Medium"], ["correct", "yes"]]
    cases = [
        {
            "id": "order",
            "input": "I want to order coffee",
            "simulator": {"use": "sim.user", "options": {"metadata": {"rules": rules}}},
            "checkpoints": [
                {"id": "greeting", "assert": {"type": "regex", "value": "(?i)hello"}},
                {"id": "size", "after": ["greeting"], "assert": {"type": "regex", "value": "size"}},
            ],
            "max_turns": 4,
        },
        {
            "id": "judged",
            "input": "hello",
            "assert": {"type": "agent", "use": "agents:sim.judge", "value": "mentions 'welcome'"},
        },
    ]
    path = write_cases(tmp_path, "dyn", cases)
    recorded = evaluate("barista", path, "--record", output="dyn/rec.jsonl")
    assert recorded.exit_code in (0, 1), recorded.output
    for model, function in (
        ("barista/src/model.py", "reply"),
        ("sim/user/src/model.py", "reply"),
        ("sim/judge/src/model.py", "verdict"),
    ):
        (tmp_path / "assistants" / model).write_text(
            f"def {function}(messages, tools, settings):\n    raise RuntimeError('not called')\n"
        )
    # A fresh process, so no module loaded while recording is reused.
    replayed = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentcli",
            "eval",
            "barista",
            path,
            "--replay",
            "-o",
            "dyn/rep.jsonl",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replayed.returncode == recorded.exit_code, replayed.stdout + replayed.stderr
    before, after = (read_results(tmp_path / f"dyn/{n}.jsonl").results for n in ("rec", "rep"))
    assert [(r.id, r.status, r.output, r.error) for r in after] == [
        (r.id, r.status, r.output, r.error) for r in before
    ]
    dynamic = after[0]
    assert [t.input for t in dynamic.turns] == [t.input for t in before[0].turns]
    assert [c.reached for c in dynamic.checkpoints] == [c.reached for c in before[0].checkpoints]
    assert after[1].assertions[0].verdict == before[1].assertions[0].verdict is not None


def _record_london(project: Path, http_url: str, server: OpenAIServer) -> str:
    configure(project, server.base_url, http_url)
    cases = write_cases(project, "modes", CASES[:1])
    assert evaluate("wstdio", cases, "--record", output="modes/rec.jsonl").exit_code == 0
    return cases


def _change_the_tool(project: Path) -> None:
    """The weather server's forecasts change: temperatures in Fahrenheit."""
    server = project / "assistants/wstdio/mcps/server.py"
    text = server.read_text()
    assert "°C" in text
    server.write_text(text.replace("°C", "°F"))


def test_replay_live_tools_runs_the_tools_and_catches_a_changed_one(project, http_weather):
    with OpenAIServer(latency=0.0) as server:
        cases = _record_london(project, http_weather, server)
    ran = evaluate("wstdio", cases, "--replay", "live-tools", output="modes/a.jsonl")
    assert ran.exit_code == 0, ran.output  # the model from the cassette, the tool for real
    _change_the_tool(project)
    ran = evaluate("wstdio", cases, "--replay", "live-tools", output="modes/b.jsonl")
    assert ran.exit_code == 1
    (result,) = read_results(project / "modes/b.jsonl").results
    # the tool answered otherwise, so the model was asked what it never was
    assert result.status == "error"
    assert "messages[2].content differs" in (result.error or ""), result.error


def test_replay_live_model_calls_the_model_with_the_tools_replayed(project, http_weather):
    with OpenAIServer(latency=0.0) as server:
        cases = _record_london(project, http_weather, server)
        (project / "assistants/wstdio/mcps/server.py").unlink()  # tools only from the cassette
        (project / "assistants/wstdio/prompts.yml").write_text(
            "- role: system\n  content: You are a terse weather bot.\n"
        )
        before = len(server.requests)
        ran = evaluate("wstdio", cases, "--replay", "live-model", output="modes/c.jsonl")
        assert ran.exit_code == 0, ran.output
        assert len(server.requests) - before == 2  # the changed prompt went to the live model
        assert server.requests[-1].body["messages"][0]["role"] == "system"
        strict = evaluate("wstdio", cases, "--replay", output="modes/d.jsonl")
    assert strict.exit_code == 1  # strict: the changed prompt is not what was recorded
    (result,) = read_results(project / "modes/d.jsonl").results
    assert "messages[0]" in (result.error or "")


def test_record_missing_replays_what_is_recorded_and_records_the_rest(project, http_weather):
    with OpenAIServer(latency=0.0) as server:
        cases = _record_london(project, http_weather, server)
        grown = write_cases(project, "modes", CASES)  # mars is new
        before = len(server.requests)
        ran = evaluate("wstdio", grown, "--record", "missing", output="modes/e.jsonl")
        assert ran.exit_code == 0, ran.output
        assert len(server.requests) - before == 2  # only mars's two calls went out
    assert cases == grown
    assert sorted(p.name for p in (project / "modes/cassettes").iterdir()) == [
        "london.jsonl",
        "mars.jsonl",
    ]
    replayed = evaluate("wstdio", grown, "--replay", output="modes/f.jsonl")
    assert replayed.exit_code == 0, replayed.output


def test_a_broken_cassette_is_exit_2_before_any_case_runs(project):
    cases = write_cases(project, "bad", CASES)
    folder = project / "bad" / "cassettes"
    folder.mkdir()
    (folder / "london.jsonl").write_text('{"type": "cassette", "version": 1, "case": "london"}\n')
    (folder / "mars.jsonl").write_text(
        '{"type": "cassette", "version": 1, "case": "mars"}\n{oops\n'
    )
    ran = evaluate("wstdio", cases, "--replay", output="bad/rep.jsonl")
    assert ran.exit_code == 2
    assert "bad/cassettes/mars.jsonl:2: not JSON" in ran.output
    assert "Running Tests" not in ran.output


def test_the_time_a_prompt_shows_is_replayed_as_recorded(project, http_weather):
    """A prompt with $SYS.TIME differs from second to second: the replay gives it the
    recorded time, so its model call still matches."""
    (project / "assistants/wstdio/prompts.yml").write_text(
        "- role: system\n  content: 'The time is $SYS.TIME.'\n"
    )
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        cases = write_cases(project, "clock", CASES[:1])
        assert evaluate("wstdio", cases, "--record", output="clock/rec.jsonl").exit_code == 0
        sent = server.requests[0].body["messages"][0]["content"]
    time.sleep(1.1)  # the clock has moved on
    replayed = evaluate("wstdio", cases, "--replay", output="clock/rep.jsonl")
    assert replayed.exit_code == 0, replayed.output
    cassette = (project / "clock/cassettes/london.jsonl").read_text()
    assert sent.startswith("The time is ") and json.dumps(sent)[1:-1] in cassette


def test_a_replay_needs_no_key_and_no_network(project, http_weather, monkeypatch):
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        cases = write_cases(project, "remote", CASES[:1])
        assert evaluate("wstdio", cases, "--record", output="remote/rec.jsonl").exit_code == 0
    # the same connector, now a real provider's address with no key anywhere
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (project / "connectors.yml").write_text(
        "loop: {model: openai/tools, api_base: 'https://api.openai.invalid/v1'}\n"
    )
    live = evaluate("wstdio", cases, output="remote/live.jsonl")
    assert live.exit_code == 2 and "needs an API key: OPENAI_API_KEY is not set" in live.output
    replayed = evaluate("wstdio", cases, "--replay", output="remote/rep.jsonl")
    assert replayed.exit_code == 0, replayed.output
    assert comparable(project / "remote/rep.jsonl") == comparable(project / "remote/rec.jsonl")


CUSTOM_KEY = "sk-custom-named-secret-0123456789abcdef"


def test_a_replay_needs_no_key_of_any_variable_name(project, http_weather, monkeypatch):
    """`api_key: $ENV.MY_SECRET_KEY` (no provider's variable): recorded with it set, the
    key goes out and never into the cassette; replayed with it unset and the server gone,
    the run needs it not; a miss is that case's replay error, never a live call."""
    connectors = "keyed: {model: openai/authecho, api_base: 'BASE', api_key: $ENV.MY_SECRET_KEY}\n"
    cases = [{"id": "who", "input": "who am I", "assert": {"type": "contains", "value": "sent"}}]
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        (project / "connectors.yml").write_text(connectors.replace("BASE", server.base_url))
        path = write_cases(project, "custom", cases)
        monkeypatch.setenv("MY_SECRET_KEY", CUSTOM_KEY)
        ran = evaluate("wstdio", path, "-c", "keyed", "--record", output="custom/rec.jsonl")
        assert ran.exit_code == 0, ran.output
        assert server.requests[0].headers["authorization"] == f"Bearer {CUSTOM_KEY}"
    text = (project / "custom/cassettes/who.jsonl").read_text()
    assert "you sent [redacted]" in text and CUSTOM_KEY not in text
    monkeypatch.delenv("MY_SECRET_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    replayed = evaluate("wstdio", path, "-c", "keyed", "--replay", output="custom/rep.jsonl")
    assert replayed.exit_code == 0, replayed.output
    assert comparable(project / "custom/rep.jsonl") == comparable(project / "custom/rec.jsonl")
    # what may call the model live still needs the key, before any case runs
    live = evaluate("wstdio", path, "-c", "keyed", "--record", "missing", output="custom/m.jsonl")
    assert live.exit_code == 2 and "api_key uses $ENV.MY_SECRET_KEY, which is not" in live.output
    write_cases(project, "custom", [{**cases[0], "input": "who are you"}])
    missed = evaluate("wstdio", path, "-c", "keyed", "--replay", output="custom/miss.jsonl")
    assert missed.exit_code == 1, missed.output
    (result,) = read_results(project / "custom/miss.jsonl").results
    assert result.status == "error" and (result.error or "").startswith("[replay_miss] ")
    assert "messages[0].content differs: 'who am I' vs 'who are you'" in result.error


HOOK = """
def Create(ctx, messages):
    listed = [t["name"] for t in ctx.mcp.list_tools("weather")]
    forecast = ctx.mcp.call_tool("weather", "get_forecast", {"city": "Paris"})
    print("hook saw", listed, forecast["summary"])
    print("chat", ctx.chat_id)  # a random id, replayed as recorded
    return None
"""


def test_ctx_mcp_calls_of_a_hook_are_recorded_and_replayed(project, http_weather):
    (project / "assistants/wstdio/src").mkdir()
    (project / "assistants/wstdio/src/index.py").write_text(HOOK)
    with OpenAIServer(latency=0.0) as server:
        configure(project, server.base_url, http_weather)
        cases = write_cases(project, "hooks", CASES[:1])
        assert evaluate("wstdio", cases, "--record", output="hooks/rec.jsonl").exit_code == 0
    (project / "assistants/wstdio/mcps/server.py").unlink()  # no server for the replay
    replayed = evaluate("wstdio", cases, "--replay", output="hooks/rep.jsonl")
    assert replayed.exit_code == 0, replayed.output
    said = [
        [line["text"] for line in r.logs or []]
        for name in ("rec", "rep")
        for r in read_results(project / f"hooks/{name}.jsonl").results
    ]
    assert said[0] == said[1] and said[0][0].startswith("hook saw ['get_forecast', 'list_cities']")
    assert said[0][1].startswith("chat test-london-")


def test_generated_cases_replay_with_the_generator_gone(tmp_path, monkeypatch):
    """The generator's calls have a cassette of their own: a replay is given the same
    cases without asking it."""
    shutil.copytree(ROOT / "assistants", tmp_path / "assistants")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    source = "agents:tests.generator-agent?count=2"
    recorded = evaluate("keyword", source, "--record", output="gen-rec.jsonl")
    assert recorded.exit_code in (0, 1), recorded.output
    assert (tmp_path / "cassettes" / ".generation.jsonl").is_file()
    generator = tmp_path / "assistants/tests/generator-agent/src/generator.py"
    generator.write_text("def reply(messages, tools, settings):\n    raise RuntimeError('gone')\n")
    replayed = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentcli",
            "eval",
            "keyword",
            source,
            "--replay",
            "-o",
            "gen-rep.jsonl",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replayed.returncode == recorded.exit_code, replayed.stdout + replayed.stderr
    assert comparable(tmp_path / "gen-rep.jsonl") == comparable(tmp_path / "gen-rec.jsonl")
    header = json.loads((tmp_path / "gen-rep.jsonl").read_text().splitlines()[0])
    assert header["metadata"]["options"]["replay"] == "strict"
    assert header["metadata"]["options"]["cassettes"] == str(tmp_path / "cassettes")


def test_a_cassette_folder_without_record_or_replay_is_exit_2(project):
    cases = write_cases(project, "idle", CASES[:1])
    ran = evaluate("wstdio", cases, "--cassettes", "tapes", output="idle/out.jsonl")
    assert ran.exit_code == 2 and "--cassettes tapes needs --record or --replay" in ran.output


# -- MCP resources and prompts ----------------------------------------------------------

LIBRARY = ROOT / "fixtures" / "library_server.py"
LIBRARY_KEY = "sk-library-planted-0123456789abcdef"
# The case's input names the book and the style ("2 long"): a changed case asks otherwise
# (a hook's module is loaded once a process, so the tests change the input, not the hook).
LIBRARY_HOOK = """
def Create(ctx, messages):
    book_id, style = messages[-1]["content"].split()
    listed = [r["uri"] for r in ctx.mcp.list_resources("library")]
    book = ctx.mcp.read_resource("library", "library://books/" + book_id)[0]["text"]
    prompts = [p["name"] for p in ctx.mcp.list_prompts("library")]
    filled = ctx.mcp.get_prompt("library", "summarize", {"title": book, "style": style})
    print("hook saw", listed, book, prompts, filled["messages"][0]["content"])
    # a key in a request and in a reply (the server echoes the uri): both redacted
    keyed = ctx.mcp.read_resource("library", "library://books/KEY")[0]
    print("keyed", keyed["uri"], keyed["text"])
    return None
""".replace("KEY", LIBRARY_KEY)
# The model says what it was given: the selection's resource reaches its context.
ECHO_MODEL = """
def reply(messages, tools, settings):
    return " | ".join(str(m["content"]) for m in messages if m["role"] == "system")
"""


@pytest.fixture
def library(tmp_path, monkeypatch) -> Path:
    """A package whose `library` server is a real stdio MCP process (a copy of the fixture
    server in the package), read by a Create hook and by its selection's `resources`."""
    package = tmp_path / "assistants" / "lib"
    (package / "mcps").mkdir(parents=True)
    (package / "src").mkdir()
    shutil.copy(LIBRARY, package / "mcps" / "library.py")
    (package / "mcps/library.mcp.yao").write_text(
        json.dumps({"transport": "stdio", "command": "python", "args": ["mcps/library.py"],
                    "timeout": 30})
    )  # fmt: skip
    selection = [{"server_id": "library", "tools": ["count"], "resources": ["library://hours"]}]
    (package / "package.yao").write_text(
        json.dumps({"name": "lib", "connector": "python:echo:reply", "mcp": {"servers": selection}})
    )
    (package / "src/index.py").write_text(LIBRARY_HOOK)
    (package / "src/echo.py").write_text(ECHO_MODEL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def said(path: Path) -> list[list[str]]:
    """What each case's hooks printed."""
    return [[line["text"].strip() for line in r.logs or []] for r in read_results(path).results]


def test_resource_reads_and_prompt_fetches_replay_with_the_server_gone(library):
    cases = write_cases(library, "lib", [{"id": "read", "input": "2 long"}])
    recorded = evaluate("lib", cases, "--record", output="lib/rec.jsonl")
    assert recorded.exit_code == 0, recorded.output
    tape = [json.loads(line) for line in (library / "lib/cassettes/read.jsonl").open()]
    assert [line["type"] for line in tape if line["type"] in ("resources", "resource",
            "prompts", "prompt")] == ["resources", "resource", "prompts", "prompt", "resource",
                                      "resources", "resource"]  # fmt: skip
    (prompt,) = [line for line in tape if line["type"] == "prompt"]
    assert prompt["request"] == {"server": "library", "prompt": "summarize",
                                 "arguments": {"title": "Emma", "style": "long"}}  # fmt: skip
    assert prompt["reply"]["result"]["messages"] == [
        {"role": "user", "content": "Summarize Emma in a long way."}
    ]
    # Not even the server's script is left: a live run cannot read anything.
    (library / "assistants/lib/mcps/library.py").unlink()
    live = evaluate("lib", cases, output="lib/live.jsonl")
    assert read_results(library / "lib/live.jsonl").results[0].status == "error", live.output
    replayed = evaluate("lib", cases, "--replay", output="lib/rep.jsonl")
    assert replayed.exit_code == 0, replayed.output
    assert comparable(library / "lib/rep.jsonl") == comparable(library / "lib/rec.jsonl")
    assert said(library / "lib/rep.jsonl") == said(library / "lib/rec.jsonl")
    (hook, keyed) = said(library / "lib/rep.jsonl")[0]
    assert hook == (
        "hook saw ['library://catalog', 'library://hours'] Emma ['summarize']"
        " Summarize Emma in a long way."
    )
    assert keyed == "keyed library://books/[redacted] unknown"
    (result,) = read_results(library / "lib/rep.jsonl").results
    assert "Mon-Fri 9:00-17:00" in str(result.output)  # the selection's resource, replayed


def test_no_key_reaches_a_cassette_through_a_resource_or_prompt(library):
    cases = write_cases(library, "lib", [{"id": "read", "input": "2 long"}])
    assert evaluate("lib", cases, "--record", output="lib/rec.jsonl").exit_code == 0
    text = (library / "lib/cassettes/read.jsonl").read_text()
    assert LIBRARY_KEY not in text
    assert '"uri": "library://books/[redacted]"' in text


def test_a_changed_resource_read_or_prompt_is_a_replay_miss_naming_the_difference(library):
    cases = write_cases(library, "lib", [{"id": "read", "input": "2 long"}])
    assert evaluate("lib", cases, "--record", output="lib/rec.jsonl").exit_code == 0
    (library / "assistants/lib/mcps/library.py").unlink()
    for given, message in (
        (
            "1 long",
            "the read of library://books/1 from library is not in lib/cassettes/read.jsonl:"
            " uri differs: 'library://books/2' vs 'library://books/1'",
        ),
        (
            "2 short",
            "the prompt library/summarize is not in lib/cassettes/read.jsonl:"
            " arguments.style differs: 'long' vs 'short'",
        ),
    ):
        changed = write_cases(library, "lib", [{"id": "read", "input": given}])
        replayed = evaluate("lib", changed, "--replay", output="lib/rep.jsonl")
        assert replayed.exit_code == 1, replayed.output
        (result,) = read_results(library / "lib/rep.jsonl").results
        assert result.status == "error" and message in (result.error or ""), result.error


def test_a_resource_read_that_failed_replays_as_it_failed(library):
    (library / "assistants/lib/src/index.py").write_text(
        "def Create(ctx, messages):\n"
        "    try:\n"
        "        ctx.mcp.get_prompt('library', 'nope')\n"
        "    except Exception as error:\n"
        "        print('failed:', type(error).__name__, error)\n"
    )
    cases = write_cases(library, "lib", [{"id": "fail", "input": "2 long"}])
    assert evaluate("lib", cases, "--record", output="lib/rec.jsonl").exit_code == 0
    (library / "assistants/lib/mcps/library.py").unlink()
    assert evaluate("lib", cases, "--replay", output="lib/rep.jsonl").exit_code == 0
    recorded, replayed = said(library / "lib/rec.jsonl"), said(library / "lib/rep.jsonl")
    assert replayed == recorded and recorded[0][0].startswith("failed: ToolError"), recorded
