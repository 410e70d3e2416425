"""`agent eval` end to end: invocation forms, formats, exit codes, interruption."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from tests.cli.imports import modules_after

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "fixtures" / "assistants" / "probe"

_register()
runner = CliRunner()

CASES = [
    {"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "Hello"}},
    {"id": "add", "input": "add 2 3", "assert": {"type": "contains", "value": "sum=5"}},
    {
        "id": "json",
        "input": "json",
        "assert": {"type": "json_path", "path": "city", "value": "Paris"},
    },
]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with assistants/probe and a case file; cwd is the project."""
    shutil.copytree(PROBE, tmp_path / "assistants" / "probe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    write_cases(tmp_path / "assistants" / "probe" / "tests" / "inputs.jsonl", CASES)
    return tmp_path


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def invoke(*args: str):
    return runner.invoke(app, ["eval", *args], catch_exceptions=False)


def test_a_case_file_alone_is_the_input_of_the_package_holding_it(project):
    # `agent eval @FILE` used to take "@FILE" for the assistant's name
    result = invoke("@assistants/probe/tests/inputs.jsonl", "-o", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert "ℹ Agent: probe" in result.output
    assert [r.id for r in read_results(project / "out.jsonl").results] == ["hello", "add", "json"]


def test_all_pass_exit_0_and_default_results_file(project):
    result = invoke("probe", "@assistants/probe/tests/inputs.jsonl")
    assert result.exit_code == 0, result.output
    assert "✨ ALL TESTS PASSED ✨" in result.output
    (output,) = (project / "assistants/probe/tests").glob("output-*.jsonl")
    loaded = read_results(output)
    assert [r.id for r in loaded.results] == ["hello", "add", "json"]
    assert loaded.summary.passed == 3
    assert loaded.summary.pass_rate == 100.0


def test_assistant_found_from_the_case_file(project):
    result = invoke("-i", "assistants/probe/tests/inputs.jsonl", "-o", "out.json")
    assert result.exit_code == 0, result.output
    report = json.loads((project / "out.json").read_text())
    assert list(report) == ["summary", "environment", "results", "metadata"]
    assert report["summary"]["agent_id"] == "probe"


def test_a_failure_exits_1(project):
    path = write_cases(
        project / "fail.jsonl",
        [{"id": "x", "input": "hello", "assert": {"type": "contains", "value": "bye"}}],
    )
    result = invoke("probe", f"@{path}", "-o", "r.jsonl")
    assert result.exit_code == 1
    assert "❌ TESTS FAILED" in result.output
    lines = result.output.splitlines()
    at = lines.index('  └─ ✗ contains: expected output to contain "bye"')
    assert lines[at + 1] == "       expected: bye · actual: Hello there!"


def test_a_bad_case_file_exits_2_with_file_and_line(project):
    path = project / "bad.jsonl"
    path.write_text(
        '{"id": "ok", "input": "hi"}\n{"id": "x", "input": "hi", "assert": {"type": "regex", "value": "("}}\n{not json\n'
    )
    result = invoke("probe", f"@{path}")
    assert result.exit_code == 2
    assert "bad.jsonl:2:" in result.output
    assert "bad.jsonl:3:" in result.output
    assert "Traceback" not in result.output
    assert not list(project.glob("output-*.jsonl"))


def test_unknown_assistant_exits_2(project):
    completed = subprocess.run(
        [sys.executable, "-m", "agentcli", "eval", "prbe", "hello"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "AGENTCLI_HOME": str(project / "home")},
    )
    assert completed.returncode == 2
    assert "prbe" in completed.stderr and "probe" in completed.stderr  # did you mean
    assert "Traceback" not in completed.stderr


def test_message_mode_prints_the_answer_and_tool_calls(project):
    result = invoke("probe", "add 4 5")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "sum=9",
        "",
        "--- Tool Calls ---",
        '  probe/add → OK (args: {"a": 4, "b": 5})',
    ]
    assert not list(project.rglob("output-*.jsonl"))


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["-o", "out.jsonl"], "-o/--output applies"),
        (["--parallel", "4", "--runs", "3"], "--parallel, --runs apply"),
        (["--fail-fast", "--retries", "1", "--run", "x"], "--run, --fail-fast, --retries apply"),
    ],
)
def test_message_mode_refuses_options_of_case_runs(project, options, named):
    result = invoke("probe", "add 4 5", *options)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: {named} to a file of cases, not to one message",
        '  hint: put the message in a case file: {"id": "T001", "input": "..."} in '
        "cases.jsonl, then agent eval NAME @cases.jsonl",
    ]
    assert not (project / "out.jsonl").exists()


def test_message_mode_json(project):
    result = invoke("probe", "json", "--json")
    data = json.loads(result.output)
    assert data["type"] == "direct_output"
    assert data["output"] == '{"intent": "weather", "city": "Paris", "days": [1, 2]}'


def test_json_mode_prints_only_json(project):
    result = invoke("probe", "@assistants/probe/tests/inputs.jsonl", "--json", "-o", "r.jsonl")
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.output.splitlines()]
    assert [e["type"] for e in events if e["type"] != "log"] == [
        "test_start",
        "test_result",
        "test_start",
        "test_result",
        "test_start",
        "test_result",
        "summary",
        "output_file",
    ]


@pytest.mark.parametrize("extension", ["jsonl", "json", "md", "html", "xml"])
def test_every_output_format_reads_back(project, extension):
    result = invoke("probe", "@assistants/probe/tests/inputs.jsonl", "-o", f"report.{extension}")
    assert result.exit_code == 0
    path = project / f"report.{extension}"
    text = path.read_text(encoding="utf-8")
    if extension == "jsonl":
        lines = [json.loads(line) for line in text.splitlines()]
        assert [line["type"] for line in lines] == [
            "header",
            "result",
            "result",
            "result",
            "summary",
        ]
    elif extension == "json":
        assert [r["id"] for r in json.loads(text)["results"]] == ["hello", "add", "json"]
    elif extension == "xml":
        suite = ET.fromstring(text).find("testsuite")
        assert suite.get("tests") == "3" and suite.get("failures") == "0"
        assert [c.get("name") for c in suite.iter("testcase")] == ["hello", "add", "json"]
    else:
        for case_id in ("hello", "add", "json"):
            assert case_id in text


def test_bad_option_values_exit_2(project):
    assert invoke("probe", "hi", "--timeout", "abc").exit_code == 2
    assert invoke("probe", "hi", "--parallel", "0").exit_code == 2
    assert invoke("probe", "hi", "--runs", "-1").exit_code == 2


def test_missing_api_key_is_a_usage_error_before_any_case(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentcli",
            "eval",
            "probe",
            "@assistants/probe/tests/inputs.jsonl",
            "-c",
            "openai/gpt-4o-mini",
        ],
        capture_output=True,
        text=True,
        cwd=project,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )
    assert completed.returncode == 2
    assert "OPENAI_API_KEY" in completed.stderr
    assert not list(project.rglob("output-*.jsonl"))


def test_sigint_keeps_every_finished_result(project):
    cases = [{"id": f"fast{i}", "input": "hello"} for i in range(3)] + [
        {"id": "slow", "input": "sleep 30"},
        {"id": "never", "input": "hello"},
    ]
    path = write_cases(project / "cases.jsonl", cases)
    out = project / "results.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "eval", "probe", f"@{path}", "-o", str(out)],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "AGENTCLI_HOME": str(project / "home")},
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().count('"type":"result"') >= 3:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=20)
    assert process.returncode == -signal.SIGINT, stderr  # ends by SIGINT: a shell sees 130
    loaded = read_results(out)
    assert [r.id for r in loaded.results] == ["fast0", "fast1", "fast2"]
    assert loaded.summary is not None and loaded.summary.total == 3
    assert f"Interrupted: 3 of 5 test cases finished; their results are in {out}" in stdout


def test_resume_keeps_finished_cases_and_runs_the_rest(project):
    path = write_cases(
        project / "cases.jsonl", [{"id": i, "input": "hello"} for i in ("a", "b", "c", "d")]
    )
    first = invoke("probe", f"@{path}", "-o", "full.jsonl")
    assert first.exit_code == 0
    lines = (project / "full.jsonl").read_text().splitlines()
    # a run killed after two results, mid-write of the third
    partial = project / "partial.jsonl"
    partial.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25])
    result = invoke("probe", f"@{path}", "--resume", "partial.jsonl")
    assert result.exit_code == 0, result.output
    assert "Resume: partial.jsonl (2 finished results kept)" in result.output
    assert result.output.count("► [") == 2  # only c and d ran
    loaded = read_results(partial)
    assert sorted(r.id for r in loaded.results) == ["a", "b", "c", "d"]
    assert loaded.summary.total == 4 and not loaded.warnings


def test_dry_run_lists_only_the_selected_shard_and_filter(project):
    path = write_cases(project / "many.jsonl", [{"id": f"k{i}", "input": "hi"} for i in range(20)])
    listed = invoke("probe", f"@{path}", "--dry-run", "--run", "^k1", "-o", "plan.jsonl")
    assert listed.exit_code == 0
    planned = [json.loads(line)["id"] for line in (project / "plan.jsonl").read_text().splitlines()]
    assert planned == ["k1"] + [f"k1{i}" for i in range(10)]
    halves = []
    for shard in ("1/2", "2/2"):
        out = project / f"shard{shard[0]}.jsonl"
        assert (
            invoke("probe", f"@{path}", "--dry-run", "--shard", shard, "-o", str(out)).exit_code
            == 0
        )
        halves.append({json.loads(line)["id"] for line in out.read_text().splitlines()})
    assert halves[0].isdisjoint(halves[1]) and len(halves[0] | halves[1]) == 20


def test_two_runs_in_the_same_second_keep_both_results_files(project):
    first = invoke("probe", "@assistants/probe/tests/inputs.jsonl")
    second = invoke("probe", "@assistants/probe/tests/inputs.jsonl")
    assert first.exit_code == second.exit_code == 0
    outputs = sorted((project / "assistants/probe/tests").glob("output-*.jsonl"))
    assert len(outputs) == 2


def test_hook_typos_and_missing_resume_files_are_found_before_anything_runs(project):
    for args in (
        ["--after-all", "nofile.Func"],
        ["--before-all", "env_test.Nope"],
        ["--resume", "gone.jsonl"],
    ):
        result = invoke("probe", "@assistants/probe/tests/inputs.jsonl", *args)
        assert result.exit_code == 2, result.output
        assert "Running Tests" not in result.output
    assert not list((project / "assistants/probe/tests").glob("output-*.jsonl"))


def test_a_case_hook_typo_is_found_before_anything_runs(project):
    cases = project / "hooks.jsonl"
    cases.write_text(
        '{"id": "ok", "input": "hello", "before": "env_test.Before"}\n'
        '{"id": "typo", "input": "hello", "after": "env_test.Aftr"}\n'
        '{"id": "skipped", "input": "hello", "before": "gone.Before", "skip": true}\n'
    )
    result = invoke("probe", "@hooks.jsonl")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "error: hooks.jsonl:2: case typo: hook 'env_test.Aftr': src/env_test.py has no function "
        "'Aftr'"
    ]
    assert not list(project.glob("output-*.jsonl"))
    cases.write_text(cases.read_text().replace("Aftr", "After"))
    assert invoke("probe", "@hooks.jsonl").exit_code == 0  # a skipped case's hook is not loaded


def test_the_run_freezes_what_is_loaded_and_thaws_it_after(project):
    """Start-up objects and case summaries are frozen for the collector during the run
    (W3 stays linear in N) and thawed after it, so in-process callers leak nothing."""
    import gc

    (project / "assistants/probe/src/gc_test.py").write_text(
        "import gc, pathlib\n\n\ndef Before(ctx, case):\n"
        "    pathlib.Path('frozen.txt').write_text(str(gc.get_freeze_count()))\n"
    )
    write_cases(project / "gc.jsonl", [{"id": "a", "input": "hello", "before": "gc_test.Before"}])
    assert gc.get_freeze_count() == 0
    assert invoke("probe", "@gc.jsonl", "-o", "r.jsonl").exit_code == 0
    assert int((project / "frozen.txt").read_text()) > 1000
    assert gc.get_freeze_count() == 0
    gc.freeze()  # a host that froze its own objects keeps them frozen
    try:
        frozen = gc.get_freeze_count()
        assert invoke("probe", "@gc.jsonl", "-o", "r2.jsonl").exit_code == 0
        assert gc.get_freeze_count() > frozen * 0.9  # still frozen (minus what was freed)
    finally:
        gc.unfreeze()


def test_finished_cases_are_freed_at_once_not_left_for_the_collector(project):
    """Per-case objects (conversation, agent, ctx, turns) hold no reference cycles, so each
    is freed when its case ends: garbage found by the collector does not grow with N."""
    from tests.garbage import cyclic_garbage

    def run(count: int) -> None:
        assert invoke("probe", f"@n{count}.jsonl", "-o", f"n{count}.out.jsonl").exit_code == 0

    def cyclic_garbage_of(count: int) -> int:
        write_cases(
            project / f"n{count}.jsonl",
            [{"id": f"c{i}", "input": f"add {i} 1"} for i in range(count)],
        )
        return cyclic_garbage(lambda: run(count))

    few, many = cyclic_garbage_of(2), cyclic_garbage_of(42)
    assert many - few < 40, (few, many)  # a cycle per case would add 40 x its size


def test_case_hooks_are_found_but_not_imported_before_before_all(project):
    """A hook module may need at import what BeforeAll sets up; one that fails to import is
    its case's error, with the file and line, not the run's."""
    src = project / "assistants/probe/src"
    (src / "setup_test.py").write_text(
        "import os\n\n\ndef BeforeAll(ctx, cases):\n    os.environ['PROBE_TOKEN'] = 't'\n"
    )
    (src / "needs_test.py").write_text(
        "import os\n\nTOKEN = os.environ['PROBE_TOKEN']\n\n\ndef Before(ctx, case):\n"
        "    return TOKEN\n"
    )
    (src / "broken_test.py").write_text("def Before(ctx, case):\n    x = (\n")
    write_cases(project / "env.jsonl", [{"id": "a", "input": "hi", "before": "needs_test.Before"}])
    ran = invoke("probe", "@env.jsonl", "--before-all", "setup_test.BeforeAll", "-o", "e.jsonl")
    assert ran.exit_code == 0, ran.output
    write_cases(project / "bad.jsonl", [{"id": "b", "input": "hi", "before": "broken_test.Before"}])
    broken = invoke("probe", "@bad.jsonl", "-o", "b.jsonl")
    assert broken.exit_code == 1
    (result,) = [r for r in read_results(project / "b.jsonl").results]
    assert result.status == "error"
    assert "broken_test.py:2" in result.error and "was never closed" in result.error


# --- the options: generated from EvalOptions --------------------------------------------


def _flat(text: str) -> str:
    """``text`` with every run of whitespace one space (help wraps at the terminal width)."""
    return " ".join(text.split())


def test_help_lists_every_option_of_eval_options_with_its_help():
    from agentcli.eval.run.options import flag_fields

    shown = _flat(runner.invoke(app, ["eval", "--help"], terminal_width=200).output)
    for flag in flag_fields():
        names = ", ".join(flag.spec.flags)
        assert f"{names} <" in shown or f"{names} {flag.spec.help}" in shown, names
        assert _flat(flag.spec.help) in shown, flag.name
    for own in ("-i, --input", "-n, --name", "--json", "-v, --verbose", "[INPUT]"):
        assert own in shown
    assert "[default: 5m]" in shown and "[default: 1; x>=1]" in shown


def test_bad_option_values_keep_their_messages(project):
    timeout = invoke("probe", "hi", "--timeout", "5 minutes")
    assert timeout.exit_code == 2
    assert timeout.output.startswith('error: invalid duration "5 minutes": use seconds')
    twice = invoke("probe", "hi", "-i", "hello")
    assert twice.exit_code == 2
    assert "give the input once: positionally or with -i" in twice.output
    rate = invoke("probe", "@assistants/probe/tests/inputs.jsonl", "--min-pass-rate", "101")
    assert rate.exit_code == 2 and "0<=x<=100" in rate.output


def test_the_results_header_records_the_options_marked_for_it(project):
    result = invoke(
        "probe", "@assistants/probe/tests/inputs.jsonl", "--parallel", "2", "--run", "^(a|h)",
        "-o", "r.jsonl",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    header = json.loads((project / "r.jsonl").read_text().splitlines()[0])
    assert json.dumps(header["metadata"]["options"]) == (
        '{"connector": null, "timeout_s": 300.0, "parallel": 2, "runs": 1, '
        '"fail_fast": false, "run": "^(a|h)", "state": "fresh"}'
    )


def test_a_new_field_reaches_the_cli_the_header_and_the_message_check(project):
    """Adding an option is one field: its flag, help, header key and message-mode rule
    follow from the metadata alone."""
    from dataclasses import dataclass, field

    from agentcli.cli.eval_cmd import eval_app
    from agentcli.errors import ConfigError
    from agentcli.eval.run.options import EvalOptions, flag, header_options
    from agentcli.eval.run.request import refuse_case_options

    @dataclass(slots=True)
    class WithNonce(EvalOptions):
        nonce: int = field(
            default=0,
            metadata=flag(
                "--nonce", help="Nonce of the simulator.", min=0, header="nonce", message=False
            ),
        )

    seen: list[EvalOptions] = []

    def run(options: EvalOptions, json_events: bool, verbose: bool) -> int:
        seen.append(options)
        return 0

    nonced = eval_app(WithNonce, run=run)
    result = runner.invoke(nonced, ["probe", "@cases.jsonl", "--nonce", "7", "--parallel", "2"])
    assert result.exit_code == 0, result.output
    (options,) = seen
    assert isinstance(options, WithNonce)
    assert (options.nonce, options.parallel, options.assistant, options.input) == (
        7, 2, "probe", "@cases.jsonl",
    )  # fmt: skip
    shown = _flat(runner.invoke(nonced, ["--help"]).output)
    assert "--nonce <int range> Nonce of the simulator. [default: 0; x>=0]" in shown
    assert runner.invoke(nonced, ["probe", "x", "--nonce", "-1"]).exit_code == 2
    assert list(header_options(options))[-3:] == ["run", "state", "nonce"]
    assert header_options(options)["nonce"] == 7
    with pytest.raises(ConfigError, match=r"^--nonce applies to a file of cases"):
        refuse_case_options(WithNonce(nonce=7))
    refuse_case_options(WithNonce())


def test_agent_help_imports_nothing_of_eval_and_eval_help_only_its_options(tmp_path):
    assert modules_after(["--help"], tmp_path, "agentcli.eval") == []
    assert modules_after(["eval", "--help"], tmp_path, "agentcli.eval") == [
        "agentcli.eval",
        "agentcli.eval.run",
        "agentcli.eval.run.options",
    ]


def test_cases_that_nothing_can_fail_are_warned_about(project):
    path = write_cases(
        project / "cases.jsonl",
        [
            {"id": "bare", "input": "hello"},
            {"id": "checked", "input": "hello", "assert": {"type": "contains", "value": "h"}},
            {"id": "expected", "input": "hello", "expected": "Hello!"},
        ],
    )
    result = invoke("probe", f"@{path}", "-o", "out.jsonl")
    warned = [line for line in result.output.splitlines() if "No assertions" in line]
    assert warned == [
        f"⚠ {path.name}:1: No assertions: 1 test case passes whatever the answer (bare); "
        'give each an "assert" or an "expected"'
    ]


def _agent(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "AGENTCLI_HOME": str(project / "home")},
    )


def test_dash_o_writes_the_results_to_stdout_alone_and_the_console_to_stderr(project):
    # A hook that prints, and writes to file descriptor 1 itself: neither reaches stdout.
    (project / "assistants/probe/src/noisy.py").write_text(
        "import os\n\ndef Before(ctx, case):\n    print('noise from a hook')\n"
        "    os.write(1, b'raw fd noise\\n')\n",
        encoding="utf-8",
    )
    cases = [*CASES, {"id": "loud", "input": "hello", "before": "noisy.Before"}]
    write_cases(project / "cases.jsonl", cases)
    run = _agent(project, "eval", "probe", "@cases.jsonl", "-o", "-")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]  # nothing else on stdout
    assert [line["type"] for line in lines] == ["header", *["result"] * len(cases), "summary"]
    assert [line["id"] for line in lines[1:-1]] == [case["id"] for case in cases]
    assert lines[-1]["passed"] == len(cases)
    assert "  Output: stdout" in run.stderr.splitlines()
    assert "✨ ALL TESTS PASSED ✨" in run.stderr
    assert not (project / "-").exists()
    assert "raw fd noise" not in run.stdout  # each stdout line parsed above as JSON, too
    assert lines[-2]["logs"] == [{"stream": "stdout", "text": "noise from a hook"}]


def test_dash_o_with_json_events_is_one_clear_error(project):
    write_cases(project / "cases.jsonl", CASES)
    run = _agent(project, "eval", "probe", "@cases.jsonl", "-o", "-", "--json")
    assert run.returncode == 2 and run.stdout == ""
    assert "--json and -o - both write to stdout" in run.stderr
    assert "Traceback" not in run.stderr


def test_dash_o_with_dry_run_writes_the_case_file_to_stdout(project):
    write_cases(project / "cases.jsonl", CASES)
    run = _agent(project, "eval", "probe", "@cases.jsonl", "--dry-run", "-o", "-")
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["id"] for line in run.stdout.splitlines()] == ["hello", "add", "json"]
