"""``agent view`` as users run it: the real command serving on 127.0.0.1, its printed URL,
bad input as one line and exit 2, a light ``--help``."""

from __future__ import annotations

import re
import signal
import socket
import urllib.request

import pytest
from typer.testing import CliRunner

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
