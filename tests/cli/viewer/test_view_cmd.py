"""``agent view`` as users run it: the real command serving on 127.0.0.1, its printed URL,
bad input as one line and exit 2, a light ``--help``."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentcli
from agentcli.cli.main import _register, app
from agentcli.cli.view_cmd import default_root
from tests.cli.imports import modules_after
from tests.cli.viewer.runs import forecast, sample_folder, write_run
from tests.cli.viewer.server import serving

_register()
runner = CliRunner()


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=20) as response:
        return response.read().decode("utf-8")


def test_it_serves_the_folder_on_a_free_local_port_until_interrupted(tmp_path):
    root = sample_folder(tmp_path / "runs")
    with serving(str(root)) as (server, line):
        match = re.fullmatch(
            rf"agent view: {re.escape(str(root))} at (http://127\.0\.0\.1:(\d+)/)  \(Ctrl\+C stops\)\n",
            line,
        )
        assert match, line
        assert int(match[2]) > 0
        assert 'href="/run?file=base.jsonl"' in get(match[1])
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 0
        assert server.stderr is not None and server.stderr.read() == ""


def test_a_results_file_opens_at_its_run_page(tmp_path):
    path = write_run(tmp_path / "one.jsonl", [forecast("solo")])
    with serving(str(path)) as (_, line):
        url = re.search(r"(http://\S+)", line)
        assert url and url[1].endswith("/run?file=one.jsonl")
        assert "solo" in get(url[1])


def test_a_missing_path_is_one_line_and_exit_2(tmp_path):
    result = runner.invoke(app, ["view", str(tmp_path / "nope"), "--no-open"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {tmp_path / 'nope'}: no such file or folder\n"
        "  hint: give a folder of results files (agent eval -o DIR/run.jsonl writes one)\n"
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [("cases.jsonl", '{"id": "a", "input": "hi"}\n'), ("agentcli.yml", "suites: {}\n")],
)
def test_a_file_that_is_no_results_file_is_one_line_and_exit_2(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["view", str(path), "--no-open", "--port", "0"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: not a results file")


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["view", str(tmp_path), "--port", str(port), "--no-open"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: 127.0.0.1:{port}: the port is in use\n"
        "  hint: pick another --port (0: any free one)\n"
    )


def test_a_port_out_of_range_is_refused(tmp_path):
    result = runner.invoke(app, ["view", str(tmp_path), "--port", "70000"])
    assert result.exit_code == 2


def test_the_default_folder_is_the_runs_folder_when_there_is_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_root() == tmp_path
    (tmp_path / ".agentcli" / "runs").mkdir(parents=True)
    assert default_root() == tmp_path / ".agentcli" / "runs"


def test_the_default_folder_is_the_project_configs_runs_folder(tmp_path, monkeypatch):
    # from a subfolder of a project whose agentcli.yml names another runs folder
    (tmp_path / "agentcli.yml").write_text("runs_folder: results\n", encoding="utf-8")
    (tmp_path / "results").mkdir()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert default_root().resolve() == (tmp_path / "results").resolve()


def test_help_imports_no_web_stack(tmp_path):
    loaded = modules_after(["view", "--help"], tmp_path, "")
    web = {"starlette", "uvicorn", "jinja2", "msgspec", "httpx"}
    assert [
        n for n in loaded if n.split(".")[0] in web or n.startswith("agentcli.cli.viewer")
    ] == []


def test_every_address_is_served_with_a_warning(tmp_path):
    write_run(tmp_path / "a.jsonl", [forecast("x")])
    with serving(str(tmp_path), "--host", "0.0.0.0") as (server, line):
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert url, line
        assert 'href="/run?file=a.jsonl"' in get(url[1])
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 0
        assert server.stderr is not None
        assert server.stderr.read() == (
            "warning: listening on 0.0.0.0: anyone who can reach this machine can read these"
            " results\n"
        )


@pytest.mark.parametrize("args", [["--help"], ["eval", "--help"]])
def test_the_other_commands_do_not_load_the_viewer(tmp_path, args):
    loaded = modules_after(args, tmp_path, "")
    assert not [name for name in loaded if name.startswith(("agentcli.cli.viewer", "starlette"))]


def _interrupted(command: list[str], after: float | None) -> tuple[int, str, str, float]:
    """Run ``command``, send it SIGINT ``after`` seconds from its start (None: as soon as
    it prints its first line); its exit status, stdout, stderr and how long it took to end
    after the signal."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    first = ""
    if after is None:
        assert process.stdout is not None
        first = process.stdout.readline()
    else:
        time.sleep(after)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"still running 20 s after SIGINT sent at {after}") from None
    return process.returncode, first + out, err, time.monotonic() - sent


PACKAGE = Path(agentcli.__file__).parent


def _before_the_handler(stderr: str) -> bool:
    """Whether a KeyboardInterrupt traceback shows the signal came before agentcli could
    set its quiet handler: Python's start-up (site, runpy finding the package), or the
    lines of agentcli.cli.main ahead of the handler (``import signal``)."""
    if "init_import_site" in stderr:  # Python's own "Fatal Python error" in its site module
        return True
    if "Traceback" not in stderr:
        return False
    frames = [(Path(f), int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', stderr)]
    ours = [(path, line) for path, line in frames if path.is_relative_to(PACKAGE)]
    if not ours:
        return True
    main = PACKAGE / "cli" / "main.py"
    handler = next(
        number
        for number, text in enumerate(main.read_text().splitlines(), 1)
        if text.startswith("_previous_handler = ")
    )
    path, line = ours[-1]
    return path in (PACKAGE / "__main__.py", PACKAGE / "__init__.py") or (
        path == main and line <= handler
    )


def test_a_ctrl_c_before_it_serves_ends_it_by_sigint_at_once_with_no_traceback(tmp_path):
    """A Ctrl-C while ``agent view`` starts (Python loading the CLI and its imports, the
    folder checked, uvicorn starting) ends it as the rest of the CLI ends on one: by SIGINT
    (a shell's 130), within a second, with no traceback. (A Ctrl-C once it serves is how a
    viewer ends: exit 0, tested above.) The signals land all along the start-up, timed
    from how long it takes to print its URL on this machine now. One that lands in Python's
    own start-up (its site module, before any agentcli code runs) is Python's to handle and
    is not counted."""
    root = sample_folder(tmp_path / "runs")
    command = [sys.executable, "-m", "agentcli", "view", str(root), "--port", "0", "--no-open"]
    starts = []
    for _ in range(2):
        clock = time.monotonic()
        with serving(str(root)):
            starts.append(time.monotonic() - clock)
    start = min(starts)  # to its URL line: serving comes after that
    moments: list[float | None] = [start * step / 12 for step in range(1, 12)]
    moments += [None, None]  # just after the URL line: uvicorn is still being loaded
    ours = 0
    for after in moments:
        code, out, err, took = _interrupted(command, after)
        said = f"SIGINT at {after} (URL after {start:.2f}s): exit {code}, stderr {err!r}"
        if _before_the_handler(err):
            continue
        ours += 1
        assert code == -signal.SIGINT, said
        assert "Traceback" not in err and err in ("", "interrupted\n"), said
        assert took < 5, said
        assert out in ("", "\n") or out.startswith("agent view: "), said
    assert ours >= 4, f"only {ours} of {len(moments)} signals landed after Python's start-up"
