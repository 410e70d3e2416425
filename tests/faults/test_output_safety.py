"""Issue 13, items 6-8: a finished result is never lost on the way to disk.

- ``--resume FILE`` killed (SIGKILL) at any moment leaves FILE resumable with every kept
  result; resuming again completes the run.
- ``-o`` is refused (exit 2, the file untouched) when it names an input, through any path,
  or an existing file that is not a results file of its format (``--force`` allows that).
- An unwritable output is found before the first case (exit 2); a full disk mid-run is its
  own error (exit 1) naming where the results written so far are; a whole-document report
  streams ``FILE.jsonl`` beside it, so a report that cannot be written loses nothing. The
  same for ``agent report``, ``agent merge`` and ``agent extract``.

Full and read-only file systems are small tmpfs mounts (root only; skipped with the reason
where mounting is refused).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results

from .harness import agent, start_agent

FORMATS = (".jsonl", ".json", ".md", ".html", ".xml")


def write_jsonl(path: Path, records: list[dict]) -> Path:
    """``records`` as JSON Lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def cases(path: Path, count: int = 3, *, size: int = 0) -> Path:
    """``count`` cases the probe assistant echoes; ``size`` pads each input."""
    pad = "x" * size
    return write_jsonl(path, [{"id": f"c{i}", "input": f"hi {i} {pad}"} for i in range(count)])


def results_file(path: Path, kept: int, *, summary: bool = False) -> Path:
    """A results file of an earlier run with ``kept`` finished results (ids ``k00000``...)."""
    lines = [{"type": "header", "metadata": {"started_at": "2026-01-01T00:00:00+00:00"}}]
    lines += [
        {"type": "result", "id": f"k{i:05d}", "status": "passed", "input": "hi", "output": "x"}
        for i in range(kept)
    ]
    if summary:
        lines.append({"type": "summary", "total": kept, "passed": kept})
    return write_jsonl(path, lines)


def ran_cases(run: subprocess.CompletedProcess[str]) -> int:
    """How many case lines the console printed."""
    return run.stdout.count("► [")


def assert_clear_error(run: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    """Exit ``code`` with an ``error:`` naming ``words``, no traceback, no internal error."""
    output = run.stdout + run.stderr
    assert run.returncode == code, output[-3000:]
    assert "Traceback" not in output and "internal error" not in output, output[-3000:]
    assert "error: " in run.stderr, run.stderr
    for word in words:
        assert word in run.stderr, run.stderr


# -- tiny file systems ---------------------------------------------------------------------


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a size-limited tmpfs (``mount(size_kb, read_only=False)``); unmounted after."""
    mounted: list[Path] = []

    def mount(size_kb: int = 64, *, read_only: bool = False) -> Path:
        point = tmp_path / f"fs{len(mounted)}"
        point.mkdir()
        options = f"size={size_kb}k" + (",ro" if read_only else "")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})")
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=10)


def fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to the last byte."""
    with (folder / "filler").open("wb", buffering=0) as handle:
        for size in (4096, 1):  # pages, then the last bytes
            try:
                while handle.write(b"\0" * size):
                    continue
            except OSError:
                continue


# -- item 6: --resume ----------------------------------------------------------------------

KEPT = 5000


def _kill_when(process: subprocess.Popen, changed: Callable[[], bool], within: float) -> None:
    """SIGKILL ``process`` as soon as ``changed()`` (or after ``within`` seconds)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and process.poll() is None and not changed():
        time.sleep(0.0005)
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)


@pytest.mark.parametrize("moment", ["first-change", "0.3s", "0.8s"])
def test_resume_killed_at_any_moment_keeps_every_kept_result(project: Path, moment: str) -> None:
    case_file = cases(project / "cases.jsonl")
    kept = results_file(project / "run.jsonl", KEPT)
    before = kept.stat()

    def changed() -> bool:
        """The file was touched (truncated, replaced) or a temp file appeared beside it."""
        if any(project.glob(".run.jsonl.*")):
            return True
        try:
            now = kept.stat()
        except FileNotFoundError:
            return True
        return (now.st_ino, now.st_size, now.st_mtime_ns) != (
            before.st_ino,
            before.st_size,
            before.st_mtime_ns,
        )

    process = start_agent(project, "eval", "probe", f"@{case_file}", "--resume", str(kept))
    if moment == "first-change":
        _kill_when(process, changed, within=30)
    else:
        _kill_when(process, lambda: False, within=float(moment.rstrip("s")))
    on_disk = read_results(kept)  # whatever moment it died, the file reads...
    ids = {r.id for r in on_disk.results}
    assert {f"k{i:05d}" for i in range(KEPT)} <= ids, f"{KEPT - len(ids)} kept results lost"
    # ... and resuming from it finishes the run.
    again = agent(project, "eval", "probe", f"@{case_file}", "--resume", str(kept))
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr
    final = read_results(kept)
    assert len(final.results) == KEPT + 3 and final.summary is not None
    assert not final.warnings, final.warnings


def test_resume_into_another_output_leaves_the_resumed_file_alone(project: Path) -> None:
    case_file = cases(project / "cases.jsonl")
    kept = results_file(project / "run.jsonl", 4)
    original = kept.read_bytes()
    run = agent(project, "eval", "probe", f"@{case_file}", "--resume", str(kept), "-o", "r.html")
    assert run.returncode == 0, run.stderr
    assert kept.read_bytes() == original
    streamed = read_results(project / "r.html.jsonl")
    assert len(streamed.results) == 7 and streamed.summary is not None


# -- item 7: -o never destroys an input or a file that is not ours --------------------------


@pytest.mark.parametrize("how", ["same-name", "other-relative-path", "absolute", "symlink"])
@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_output_naming_the_case_file_is_refused(project: Path, how: str, dry_run: bool) -> None:
    (project / "sub").mkdir()
    case_file = cases(project / "cases.jsonl")
    original = case_file.read_bytes()
    if how == "symlink":
        (project / "link.jsonl").symlink_to(case_file)
    output = {
        "same-name": "cases.jsonl",
        "other-relative-path": "sub/../cases.jsonl",
        "absolute": str(case_file),
        "symlink": "link.jsonl",
    }[how]
    extra = ["--dry-run"] if dry_run else []
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", output, *extra)
    assert_clear_error(run, 2, "is the input file", "choose another output path")
    assert ran_cases(run) == 0
    assert case_file.read_bytes() == original
    forced = agent(project, "eval", "probe", "@cases.jsonl", "-o", output, "--force", *extra)
    assert forced.returncode == 2 and case_file.read_bytes() == original  # --force never


def test_output_naming_the_ctx_file_is_refused(project: Path) -> None:
    cases(project / "cases.jsonl")
    ctx = project / "ctx.json"
    ctx.write_text('{"locale": "en-us"}', encoding="utf-8")
    run = agent(project, "eval", "probe", "@cases.jsonl", "--ctx", "ctx.json", "-o", "ctx.json")
    assert_clear_error(run, 2, "is the input file")
    assert ctx.read_text(encoding="utf-8") == '{"locale": "en-us"}'


@pytest.mark.parametrize("suffix", FORMATS)
def test_an_existing_file_that_is_not_ours_needs_force(project: Path, suffix: str) -> None:
    cases(project / "cases.jsonl")
    target = project / f"notes{suffix}"
    target.write_text('{"id": "mine", "input": "my own data"}\n', encoding="utf-8")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", target.name)
    assert_clear_error(run, 2, "not a results file", "--force")
    assert ran_cases(run) == 0
    assert target.read_text(encoding="utf-8") == '{"id": "mine", "input": "my own data"}\n'
    forced = agent(project, "eval", "probe", "@cases.jsonl", "-o", target.name, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "my own data" not in target.read_text(encoding="utf-8")


@pytest.mark.parametrize("suffix", FORMATS)
def test_an_earlier_report_of_the_same_format_is_replaced(project: Path, suffix: str) -> None:
    cases(project / "cases.jsonl")
    for _ in range(2):  # the second run replaces the first one's report without --force
        run = agent(project, "eval", "probe", "@cases.jsonl", "-o", f"r{suffix}")
        assert run.returncode == 0, run.stderr
    assert not [name for name in os.listdir(project) if name.endswith(".tmp")]


def test_the_streamed_jsonl_beside_a_report_is_checked_too(project: Path) -> None:
    cases(project / "cases.jsonl")
    (project / "r.html.jsonl").write_text("my notes\n", encoding="utf-8")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", "r.html")
    assert_clear_error(run, 2, "r.html.jsonl", "not a results file")
    assert (project / "r.html.jsonl").read_text(encoding="utf-8") == "my notes\n"
    assert not (project / "r.html").exists()


def test_a_device_is_never_replaced(project: Path) -> None:
    cases(project / "cases.jsonl")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", "/dev/null", "--force")
    assert_clear_error(run, 2, "not a regular file")
    assert Path("/dev/null").is_char_device()


def test_report_and_merge_refuse_an_input_or_a_file_not_theirs(project: Path) -> None:
    first = agent(project, "eval", "probe", f"@{cases(project / 'cases.jsonl')}", "-o", "a.jsonl")
    assert first.returncode == 0, first.stderr
    notes = project / "notes.md"
    notes.write_text("# my notes\n", encoding="utf-8")
    for args in (
        ["report", "a.jsonl", "-o", "a.jsonl"],
        ["merge", "a.jsonl", "-o", "a.jsonl"],
        ["report", "a.jsonl", "-o", "notes.md"],
        ["merge", "a.jsonl", "-o", "notes.md"],
    ):
        run = agent(project, *args)
        assert_clear_error(run, 2)
    assert notes.read_text(encoding="utf-8") == "# my notes\n"
    assert len(read_results(project / "a.jsonl").results) == 3
    forced = agent(project, "report", "a.jsonl", "-o", "notes.md", "--force")
    assert forced.returncode == 0, forced.stderr
    assert notes.read_text(encoding="utf-8").startswith("# Agent Eval Report")


# -- item 8: unwritable outputs, full disks -------------------------------------------------


@pytest.mark.parametrize("suffix", FORMATS)
@pytest.mark.parametrize("problem", ["under-a-file", "read-only", "full"])
def test_an_unwritable_output_is_bad_input_before_the_first_case(
    project: Path, tiny_fs: Callable[..., Path], suffix: str, problem: str
) -> None:
    cases(project / "cases.jsonl")
    if problem == "under-a-file":
        (project / "plain").write_text("a file\n", encoding="utf-8")
        output, words = project / "plain" / f"r{suffix}", ["a part of the path is a file"]
    elif problem == "read-only":
        output, words = tiny_fs(read_only=True) / f"r{suffix}", ["read-only"]
    else:
        folder = tiny_fs(64)
        fill(folder)
        output, words = folder / f"r{suffix}", ["no space left"]
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", str(output))
    assert_clear_error(run, 2, str(output.parent), *words)
    assert ran_cases(run) == 0
    assert "hint: " in run.stderr


@pytest.mark.parametrize("suffix", FORMATS)
def test_a_full_disk_mid_run_is_its_own_error_and_keeps_what_was_written(
    project: Path, tiny_fs: Callable[..., Path], suffix: str
) -> None:
    cases(project / "cases.jsonl", 12, size=6000)  # ~20 KB a result: 64 KB fill mid-run
    folder = tiny_fs(64)
    output = folder / f"r{suffix}"
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", str(output))
    assert_clear_error(run, 1, "no space left", "--resume")
    assert 0 < ran_cases(run) < 12
    streamed = output if suffix == ".jsonl" else folder / f"r{suffix}.jsonl"
    said = re.search(r"the (\d+) finished results? written before", run.stderr)
    assert said, run.stderr
    assert f"are in {streamed}" in run.stderr
    kept = read_results(streamed)  # a torn last line at most, dropped with a warning
    assert len(kept.results) == int(said[1]) >= 1
    # The hint works: with space again, --resume finishes the run from that file.
    (project / "saved.jsonl").write_bytes(streamed.read_bytes())
    again = agent(project, "eval", "probe", "@cases.jsonl", "--resume", "saved.jsonl")
    assert again.returncode == 0, again.stderr
    assert len(read_results(project / "saved.jsonl").results) == 12


def test_a_report_that_does_not_fit_leaves_the_complete_jsonl(
    project: Path, tiny_fs: Callable[..., Path]
) -> None:
    cases(project / "cases.jsonl", 3, size=3000)
    folder = tiny_fs(48)  # the JSON Lines fit; the HTML page (JSON inside, CSS, text) does not
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", str(folder / "r.html"))
    assert_clear_error(run, 1, "no space left", f"every result is in {folder / 'r.html.jsonl'}")
    assert "agent report" in run.stderr
    assert "Pass Rate" in run.stdout  # the summary is still shown
    streamed = read_results(folder / "r.html.jsonl")
    assert len(streamed.results) == 3 and streamed.summary is not None
    assert not (folder / "r.html").exists()
    assert not list(folder.glob(".r.html*.tmp"))  # no temp file left behind


def test_report_merge_and_extract_on_a_full_disk(project: Path, tiny_fs: Callable[..., Path]):
    cases(project / "cases.jsonl", 40, size=6000)  # the HTML report is a fraction of it
    made = agent(project, "eval", "probe", "@cases.jsonl", "-o", "r.jsonl")
    assert made.returncode == 0, made.stderr
    folder = tiny_fs(64)
    for args in (
        ["report", "r.jsonl", "-o", str(folder / "r.html")],
        ["merge", "r.jsonl", "-o", str(folder / "m.json")],
        ["extract", "r.jsonl", "-o", str(folder / "cases")],
    ):
        run = agent(project, *args)
        assert_clear_error(run, 1, "no space left")
    assert re.search(r"\d+ files? (was|were) written to", run.stderr)  # how far extract got
    assert len(read_results(project / "r.jsonl").results) == 40  # the input is untouched


def test_report_merge_and_extract_to_an_unwritable_path(project: Path) -> None:
    made = agent(project, "eval", "probe", f"@{cases(project / 'cases.jsonl')}", "-o", "r.jsonl")
    assert made.returncode == 0, made.stderr
    (project / "plain").write_text("a file\n", encoding="utf-8")
    for args in (
        ["report", "r.jsonl", "-o", "plain/r.html"],
        ["merge", "r.jsonl", "-o", "plain/m.json"],
        ["extract", "r.jsonl", "-o", "plain/cases"],
        ["extract", "r.jsonl", "-o", "plain"],
    ):
        run = agent(project, *args)
        assert_clear_error(run, 2, "plain")


def test_extract_into_the_results_folder_never_overwrites_the_results(project: Path) -> None:
    write_jsonl(project / "cases.jsonl", [{"id": "r", "input": "hi"}, {"id": "R", "input": "x"}])
    made = agent(project, "eval", "probe", "@cases.jsonl", "-o", "r.json")
    assert made.returncode == 0, made.stderr
    before = (project / "r.json").read_bytes()
    run = agent(project, "extract", "r.json", "-o", ".", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert (project / "r.json").read_bytes() == before
    assert json.loads((project / "r-2.json").read_text(encoding="utf-8"))["id"] == "r"
