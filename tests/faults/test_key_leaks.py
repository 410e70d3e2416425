"""A planted API key used as the connector's key, which the loopback server echoes back in
answers and in error messages, appears in no output: results files of every format, the
NDJSON stream, the console (verbose), stderr, ``agent extract`` files, and ``agent run``'s
``--json`` events and session log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .harness import agent, agent_env

# Not shaped like any known credential (no sk- prefix, no "Bearer", too short for the
# opaque-key pattern): only the rule "values of *KEY* variables are secrets" can catch it.
PLANTED = "zq7Xw2Lm9PvRt4KsB8nD"
FORMATS = ("jsonl", "json", "md", "html", "xml")


@pytest.fixture
def leaky(project: Path, server) -> Path:
    """Connectors that send the planted key and a server that quotes it back."""
    lines = [
        f"{name}: {{model: 'openai/{mode}', api_base: '{server.base_url}', "
        "api_key: $ENV.EXAMPLE_API_KEY, retry: {max_attempts: 2, base_delay: 0.01}}"
        for name, mode in (
            ("loop", "authecho"),
            ("looperr", "autherr"),
            ("loopbits", "authecho+chunks-3"),  # the key split across streamed deltas
        )
    ]
    (project / "connectors.yml").write_text("\n".join(lines) + "\n")
    cases = [
        # The answer is "you sent <key>": an output, a failed assertion's message, a trace.
        {"id": "echoed", "input": "hi", "assert": {"type": "equals", "value": "nothing"}},
        {"id": "echoed-pass", "input": "hi", "assert": {"type": "contains", "value": "sent"}},
        # A 401 whose message quotes the Authorization header: an error result.
        {"id": "rejected", "input": "hi", "options": {"connector": "looperr"}},
    ]
    for case in cases:
        case.setdefault("options", {"connector": "loop"})
    (project / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return project


def leaks(text: str) -> bool:
    """Whether the planted key (or a long piece of it) is in ``text``."""
    return PLANTED in text or PLANTED[:12] in text or PLANTED[-12:] in text


def every_file(folder: Path) -> dict[str, str]:
    """Text of every file under ``folder`` except the inputs the test wrote."""
    return {
        str(path.relative_to(folder)): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.name not in ("connectors.yml", "cases.jsonl")
        and "assistants" not in path.parts
    }


def test_no_output_of_eval_or_extract_contains_the_planted_key(leaky: Path):
    env = agent_env(leaky, EXAMPLE_API_KEY=PLANTED)
    streams: dict[str, str] = {}
    for fmt in FORMATS:
        extra = ["--json"] if fmt == "jsonl" else ["-v"]
        run = agent(leaky, "eval", "probe", "@cases.jsonl", "-o", f"r.{fmt}", *extra, env=env)
        assert run.returncode == 1, run.stderr  # one failed, one error
        streams[f"eval -o r.{fmt} stdout"] = run.stdout
        streams[f"eval -o r.{fmt} stderr"] = run.stderr
    events = [json.loads(line) for line in streams["eval -o r.jsonl stdout"].splitlines()]
    results = {e["id"]: e for e in events if e["type"] == "test_result"}
    # The key really went out and came back: redaction, not luck, keeps it out.
    assert results["echoed"]["error"] == 'expected "nothing", got "you sent [redacted]"'
    assert results["echoed-pass"]["status"] == "passed"
    assert results["rejected"]["status"] == "error"
    assert results["rejected"]["error"].startswith("[auth] ")
    for fmt in ("markdown", "json"):
        run = agent(leaky, "extract", "r.jsonl", "--format", fmt, "-o", f"extract-{fmt}", env=env)
        assert run.returncode == 0, run.stderr
        streams[f"extract {fmt}"] = run.stdout + run.stderr
    run = agent(leaky, "eval", "probe", "hi", "-c", "loop", env=env)
    streams["eval message mode"] = run.stdout + run.stderr
    run = agent(leaky, "eval", "probe", "hi", "-c", "looperr", env=env)
    streams["eval message mode, rejected"] = run.stdout + run.stderr
    assert "[redacted]" in streams["eval message mode"]

    outputs = {**streams, **every_file(leaky)}
    assert {f"r.{fmt}" for fmt in FORMATS} <= set(outputs)
    assert any(name.startswith("extract-json/") for name in outputs)
    leaked = sorted(name for name, text in outputs.items() if leaks(text))
    assert not leaked, f"the planted key appears in: {leaked}"


def test_agent_run_json_events_and_session_log_do_not_contain_the_planted_key(leaky: Path):
    env = agent_env(leaky, EXAMPLE_API_KEY=PLANTED)
    outputs = {}
    for connector in ("loop", "looperr", "loopbits"):
        run = agent(leaky, "run", "probe", "hi", "-c", connector, "--json", env=env)
        outputs[f"run -c {connector} --json"] = run.stdout + run.stderr
        run = agent(leaky, "run", "probe", "hi", "-c", connector, env=env)
        outputs[f"run -c {connector}"] = run.stdout + run.stderr
    assert outputs["run -c loopbits"].startswith("you sent [redacted]")
    deltas = [
        json.loads(line)["delta"]["text"]
        for line in outputs["run -c loopbits --json"].splitlines()
        if line.startswith('{"type": "message_update"')
    ]
    assert len(deltas) > 1 and "".join(deltas) == "you sent [redacted]"
    run = agent(leaky, "run", "probe", "hi", "-c", "loop", "--session", "leak", env=env)
    assert run.returncode == 0, run.stderr
    outputs.update(every_file(leaky / "home"))
    assert "sessions/leak.jsonl" in outputs, sorted(outputs)
    assert "[redacted]" in outputs["run -c loop --json"]
    leaked = sorted(name for name, text in outputs.items() if leaks(text))
    assert not leaked, f"the planted key appears in: {leaked}"
