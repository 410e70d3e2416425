"""Eval cases with a sandbox: one workspace per case, seeded, asserted on with ``file``,
removed afterwards unless ``--keep-sandboxes`` (then its path is in the result). Runs the
``coder`` example, whose scripted model writes a script and runs it with the sandbox tools."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.assistant.sandbox.bwrap import bwrap_refusal
from agentcli.cli.main import _register, app
from agentcli.eval.results.model import CaseResult

ROOT = Path(__file__).resolve().parents[3]
CODER_CASES = ROOT / "assistants" / "coder" / "tests" / "inputs.jsonl"
_register()


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temporary folder of the run: workspaces left behind show up here."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    return folder


def run_eval(*args: str) -> tuple[int, str, list[dict]]:
    result = CliRunner().invoke(app, ["eval", *args])
    out = Path(args[args.index("-o") + 1])
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result.exit_code, result.output, lines


def test_the_coder_example_writes_and_runs_a_script_then_its_workspace_is_gone(
    temp: Path, tmp_path: Path
) -> None:
    code, output, lines = run_eval("coder", "-i", str(CODER_CASES), "-o", str(tmp_path / "r.jsonl"))
    assert code == 0, output
    results = {line["id"]: line for line in lines if line["type"] == "result"}
    assert set(results) == {"sum-script", "seeded-check", "list-files"}
    for result in results.values():
        assert result["status"] == "passed", result
        assert "sandbox" not in result  # written only when kept
    calls = results["sum-script"]["trace"]["tool_calls"]
    assert [(c["server"], c["tool"]) for c in calls] == [
        ("sandbox", "write_file"),
        ("sandbox", "exec"),
    ]
    files = [a for a in results["sum-script"]["assertions"] if a["type"] == "file"]
    assert files and all(a["passed"] for a in files)
    assert list(temp.iterdir()) == []


def test_keep_sandboxes_keeps_each_case_workspace_and_records_it(
    temp: Path, tmp_path: Path
) -> None:
    code, output, lines = run_eval(
        "coder", "-i", str(CODER_CASES), "-o", str(tmp_path / "r.jsonl"), "--keep-sandboxes"
    )
    assert code == 0, output
    header = lines[0]
    assert header["metadata"]["options"]["keep_sandboxes"] is True
    kept = {line["id"]: Path(line["sandbox"]) for line in lines if line["type"] == "result"}
    assert len(set(kept.values())) == 3  # one workspace per case
    assert (kept["sum-script"] / "out.txt").read_text() == "total=5050\n"
    assert (kept["seeded-check"] / "calc.py").exists()
    assert not (kept["seeded-check"] / "sum.py").exists()
    for path in kept.values():
        assert path.is_relative_to(temp)
        shutil.rmtree(path.parent)


def test_a_failing_file_assertion_fails_the_case(temp: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "wrong-total",
                "input": "Write a script that prints the sum of 1 to 10, and run it.",
                "assert": [{"type": "file", "path": "out.txt", "contains": "total=5050"}],
            }
        )
        + "\n"
    )
    code, output, lines = run_eval("coder", "-i", str(cases), "-o", str(tmp_path / "r.jsonl"))
    assert code == 1, output
    [result] = [line for line in lines if line["type"] == "result"]
    assert result["error"] == 'file "out.txt" does not contain "total=5050"'


def test_a_case_may_switch_the_backend_to_bwrap(temp: Path, tmp_path: Path) -> None:
    reason = asyncio.run(bwrap_refusal())
    if reason is not None:
        pytest.skip(f"bwrap cannot run here: {reason}")
    [case] = [json.loads(line) for line in CODER_CASES.read_text().splitlines()[1:2]]
    case["sandbox"] = {"backend": "bwrap", "network": False}
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n")
    code, output, _lines = run_eval("coder", "-i", str(cases), "-o", str(tmp_path / "r.jsonl"))
    assert code == 0, output
    assert list(temp.iterdir()) == []


def test_a_sandbox_that_cannot_be_made_is_the_case_error(
    temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.assistant.sandbox import bwrap

    monkeypatch.setattr(
        bwrap, "_probed", {bwrap.shutil.which("bwrap") or "": "refused in this test"}
    )
    [case] = [json.loads(line) for line in CODER_CASES.read_text().splitlines()[1:2]]
    case["sandbox"] = {"backend": "bwrap"}
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n")
    code, output, lines = run_eval("coder", "-i", str(cases), "-o", str(tmp_path / "r.jsonl"))
    assert code == 1, output
    [result] = [line for line in lines if line["type"] == "result"]
    assert result["status"] == "error"
    assert "sandbox backend bwrap cannot run here: refused in this test" in result["error"]
    assert list(temp.iterdir()) == []


def test_the_kept_path_round_trips_through_the_results_codec() -> None:
    result = CaseResult(id="c", status="passed", sandbox="/tmp/agentcli-sandbox-x/work")
    data = result.to_dict()
    assert list(data)[-1] == "sandbox"
    again = CaseResult.from_dict(data)
    assert again.sandbox == result.sandbox and again.source is None
    assert "sandbox" not in CaseResult(id="c", status="passed").to_dict()


def test_a_package_whose_backend_cannot_run_fails_before_the_first_case(
    temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.assistant.sandbox import bwrap

    package = tmp_path / "assistants" / "coder"
    shutil.copytree(ROOT / "assistants" / "coder", package)
    text = (package / "package.yao").read_text().replace('"local"', '"bwrap"')
    (package / "package.yao").write_text(text)
    monkeypatch.setattr(bwrap, "_probed", {bwrap.shutil.which("bwrap") or "": "refused here"})
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(
        app, ["eval", str(package), "-i", str(package / "tests" / "inputs.jsonl"), "-o", str(out)]
    )
    assert result.exit_code == 1, result.output
    assert "error: sandbox backend bwrap cannot run here: refused here" in result.output
    assert "apt-get install bubblewrap" in result.output
    assert not out.exists()


def test_script_tests_get_a_sandbox_of_their_own_removed_after_each(
    temp: Path, tmp_path: Path
) -> None:
    package = tmp_path / "assistants" / "coder"
    shutil.copytree(ROOT / "assistants" / "coder", package)
    (package / "src").mkdir()
    (package / "src" / "box_test.py").write_text(
        "def TestRunsAScript(t, ctx):\n"
        "    ctx.sandbox.WriteFile('hi.py', 'print(6 * 7)')\n"
        "    t.assert_.equal(ctx.sandbox.Exec(['python3', 'hi.py']), '42\\n')\n"
        "    t.assert_.equal([e['name'] for e in ctx.sandbox.ListDir()], ['hi.py'])\n"
        "\n"
        "def TestStartsEmpty(t, ctx):\n"
        "    t.assert_.equal(ctx.sandbox.list_dir('.'), [])\n"
    )
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(app, ["eval", str(package), "--scripts", "box", "-o", str(out)])
    assert result.exit_code == 0, result.output
    statuses = [json.loads(line).get("status") for line in out.read_text().splitlines()[1:-1]]
    assert statuses == ["passed", "passed"]
    assert list(temp.iterdir()) == []
