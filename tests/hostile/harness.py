"""Running one corpus entry through every path that applies, and what each run must show:
an exit code of 0, 1 or 2 (130 when the harness interrupted it), no traceback or
``internal error``, an end within the bound, a clear ``error:`` with every exit 2, and no
lost result — a results file that parses (header first, one line per result, summary last)
and holds every case that ran, in every format."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.faults.harness import STATUSES, agent_env

from .cli import Run, run_agent
from .corpus import Entry
from .project import STANDARD_CASES, STANDARD_IDS, materialize

__all__ = ["BOUND", "run_entry"]

BOUND = 12.0
"""Seconds any one command may take before it counts as a hang and is killed."""
CASE_TIMEOUT = "3s"
EVENT_TYPES = {"test_start", "test_result", "dynamic_start", "dynamic_result", "stability",
               "summary", "output_file", "log"}  # fmt: skip
FAILING = ("failed", "errors", "timeouts")
CLEAN_ID = "hostile-clean-1"


class Problems(list[str]):
    """What an entry got wrong, one line each; and the CPU seconds of its commands that
    ended by themselves (what the corpus costs once nothing hangs)."""

    cpu: float = 0.0

    def of_run(self, run: Run, *, allowed: tuple[int, ...] = (0, 1, 2)) -> bool:
        """The generic checks of one command; True when it ended by itself in time."""
        command = _short(run.show())
        if not run.hung:
            self.cpu += run.cpu
        if run.hung:
            self.append(f"{command}: no exit within {BOUND:g}s (killed: a hang)")
            return False
        if run.code not in allowed:
            self.append(f"{command}: exit {run.code} (allowed {allowed}){_tail(run.stderr)}")
        for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
            if "Traceback (most recent call last)" in text or "internal error" in text:
                self.append(f"{command}: internal error on {name}:{_tail(text, 'rror')}")
                break
        if run.code == 2 and not _says_error(run):
            self.append(f"{command}: exit 2 without an error message{_tail(run.stderr)}")
        return True


def _says_error(run: Run) -> bool:
    """An exit 2 explains itself: ``error:`` on stderr, or the eval view's own error line
    (``✗ ...`` on the console, a ``log`` event of level ``error`` under ``--json``)."""
    return (
        "error:" in run.stderr
        or any(line.startswith("✗") for line in run.stdout.splitlines())
        or '"level": "error"' in run.stdout
    )


def _short(text: str, limit: int = 110) -> str:
    """A command line shortened for a report line, with non-printables escaped."""
    text = text.encode("unicode_escape", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tail(text: str, marker: str | None = None) -> str:
    """`` — <the line naming the problem>`` (or the last line) of a stream."""
    found = [line for line in text.splitlines() if line.strip()]
    if marker:
        found = [line for line in found if marker in line] or found
    return f" — {_short(found[-1].strip(), 160)}" if found else ""


def run_entry(entry: Entry, folder: Path) -> Problems:
    """Build ``entry`` in ``folder`` and run it through its paths; the problems found."""
    folder.mkdir(parents=True)
    materialize(folder, entry.files)
    env = agent_env(folder, HOSTILE_SET="1")
    problems = Problems()
    if entry.kind == "results":
        _results_paths(entry, folder, env, problems)
    else:
        _eval_paths(entry, folder, env, problems)
    shutil.rmtree(folder, ignore_errors=True)
    unique = Problems(dict.fromkeys(problems))
    unique.cpu = problems.cpu
    return unique


# --- load + run, every writer --------------------------------------------------------------


def _eval_paths(entry: Entry, folder: Path, env: dict[str, str], problems: Problems) -> None:
    """``agent list --check`` (packages), then ``agent eval`` once per writer, then report,
    extract and merge on the JSON Lines results."""
    allowed = (0, 1, 2, 130) if entry.interrupt_after else (0, 1, 2)
    if entry.kind == "package":
        run = run_agent(
            ["list", "--check"],
            cwd=folder,
            env=env,
            bound=BOUND,
            interrupt_after=entry.interrupt_after,
        )
        problems.of_run(run, allowed=allowed)
    protected = {name: _snapshot(folder / name) for name in (entry.cases_file, *entry.protect)}
    outputs = [entry.output] if entry.output else [f"out{suffix}" for suffix in entry.writers]
    counts: dict[str, int] = {}
    refused = 0
    for output in outputs:
        if refused >= 2:
            break  # refused twice before anything ran (bad input): no writer is reached
        events = output.endswith(".json")  # the .json run streams NDJSON events
        argv = ["eval", "hostile", f"@{entry.cases_file}", "-o", output, "--timeout", CASE_TIMEOUT]
        argv += [*entry.args, "--json" if events else "-v"]
        run = run_agent(
            argv, cwd=folder, env=env, bound=BOUND, interrupt_after=entry.interrupt_after
        )
        if not problems.of_run(run, allowed=allowed):
            break  # one hang says it; the other writers would only wait out the bound again
        _check_refusal(entry, run, problems)
        found = _check_written(run, folder / output, events, problems, protected)
        if found is not None:
            counts[output] = found
        refused += run.code == 2 and not found
    if len({n for n in counts.values() if n is not None}) > 1:
        problems.append(f"lost results: the writers disagree on the number of results: {counts}")
    for name, before in protected.items():
        if _snapshot(folder / name) != before:
            problems.append(f"{name} was changed by agent eval (an input, or not a results file)")
    if counts.get("out.jsonl"):
        _read_back(folder / "out.jsonl", counts["out.jsonl"], folder, env, problems, brief=True)


def _check_refusal(entry: Entry, run: Run, problems: Problems) -> None:
    """An input the issue says must be refused is refused (exit 2) and named."""
    if not entry.refuse:
        return
    command = _short(run.show())
    if run.code != 2:
        problems.append(f"{command}: exit {run.code}, but this input must be refused (exit 2)")
        return
    said = run.stdout + run.stderr
    missing = [text for text in entry.refuse if text not in said]
    if missing:
        problems.append(f"{command}: the refusal does not name {missing}{_tail(run.stderr)}")


def _snapshot(path: Path) -> bytes | None:
    """The bytes of a file (None when absent); a FIFO or directory is left alone."""
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _check_written(
    run: Run, path: Path, events: bool, problems: Problems, protected: dict[str, Any]
) -> int | None:
    """The results one ``agent eval`` wrote, checked; their number (None when none)."""
    command = _short(run.show())
    if path.name in protected or not path.is_file() or path.resolve() == Path("/dev/full"):
        if run.code in (0, 1) and not path.is_file():
            problems.append(f"lost results: {command} exited {run.code} but wrote no {path.name}")
        return None
    try:
        results, summary = _parse_output(path)
    except ValueError as error:
        if run.code in (0, 1, 130):
            problems.append(f"lost results: {command}: {path.name} is not whole: {error}")
        return None
    if results is None:
        return None  # written and whole, but Markdown and HTML are not counted
    if run.code == 2 and results:
        problems.append(f"{command}: exit 2 (bad input) after {len(results)} cases ran")
    if summary is not None and run.code in (0, 1):
        _check_summary(command, results, summary, run.code, problems)
    if events and run.code in (0, 1, 130):
        _check_events(command, run.stdout, results, problems)
    return len(results)


def _check_summary(
    command: str, results: list[dict[str, Any]], summary: dict[str, Any], code: int, problems
) -> None:
    """The summary agrees with the results and with the exit code."""
    total = summary.get("total")
    if isinstance(total, int) and total != len(results) and not summary.get("runs_per_case"):
        problems.append(f"lost results: {command}: summary total {total}, {len(results)} results")
    bad = sum(summary.get(key, 0) for key in FAILING if isinstance(summary.get(key), int))
    if (code == 0) != (bad == 0):
        problems.append(f"{command}: exit {code} but the summary counts {bad} failing cases")
    statuses = Counter(_key(r.get("status")) for r in results if isinstance(r, dict))
    if not set(statuses) <= STATUSES:
        problems.append(f"{command}: results with undefined statuses: {dict(statuses)}")


def _check_events(
    command: str, stdout: str, results: list[dict[str, Any]], problems: Problems
) -> None:
    """Under ``--json`` stdout is agentcli's own NDJSON, and every result event is a result
    in the file (a hook or tool cannot forge one)."""
    reported: list[Any] = []
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            problems.append(f"{command}: stdout line {number} is not JSON: {_short(line, 80)}")
            return
        if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
            problems.append(f"{command}: stdout line {number} is not an event: {_short(line, 80)}")
            return
        if event["type"] in ("test_result", "dynamic_result"):
            reported.append(_key(event.get("id")))
    written = Counter(_key(r.get("id")) for r in results if isinstance(r, dict))
    forged = Counter(reported) - written
    if forged:
        problems.append(f"{command}: result events for cases not in the file: {dict(forged)}")


def _parse_output(path: Path) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """The results and summary of a written results file, by format (None for formats that
    are only checked for being whole); ValueError when it is not whole (the JSON Lines
    shape: a header first, results, the summary last)."""
    suffix = path.suffix
    text = path.read_text(encoding="utf-8")
    if suffix == ".jsonl":
        records = [_json(line) for line in text.splitlines() if line.strip()]
        kinds = [r.get("type") if isinstance(r, dict) else None for r in records]
        if not kinds or kinds[0] != "header":
            raise ValueError("the first line is not the header")
        if kinds[-1] != "summary":
            raise ValueError("the last line is not the summary")
        if set(kinds[1:-1]) - {"result", "stability"}:
            raise ValueError(f"unexpected lines: {sorted(map(str, set(kinds[1:-1])))}")
        return [r for r in records if r["type"] == "result"], records[-1]
    if suffix == ".json":
        report = _json(text)
        if not isinstance(report, dict) or not isinstance(report.get("results"), list):
            raise ValueError("no results array")
        return report["results"], report.get("summary")
    if suffix == ".xml":
        try:
            tree = ElementTree.fromstring(text)
        except ElementTree.ParseError as error:
            raise ValueError(f"not XML: {error}") from None
        return [{"id": t.get("name")} for t in tree.iter("testcase")], None
    if not text.strip() or (suffix == ".html" and "</html>" not in text):
        raise ValueError("empty or cut short")
    return None, None


def _json(text: str) -> Any:
    """JSON as agentcli writes it (NaN allowed); ValueError for anything else."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"invalid JSON: {str(error)[:80]}") from None


# --- report, extract, merge, --resume --------------------------------------------------------


def _results_paths(entry: Entry, folder: Path, env: dict[str, str], problems: Problems) -> None:
    """A results file read back by every command that reads one."""
    source = folder / next(iter(entry.files))
    _read_back(source, _result_records(source), folder, env, problems)
    _resume(source, folder, env, problems)


def _result_records(path: Path) -> int | None:
    """How many results the file holds as objects (what must survive being read back); None
    when the file is beyond this harness's own reading."""
    try:
        text = path.read_text(encoding="utf-8-sig")
        first = next((line for line in text.splitlines() if line.strip()), "")
        if first and isinstance(_json_or_none(first), dict) and "type" in _json_or_none(first):
            records = [_json_or_none(line) for line in text.splitlines() if line.strip()]
            return sum(1 for r in records if isinstance(r, dict) and r.get("type") == "result")
        report = _json(text)
        results = report.get("results") if isinstance(report, dict) else None
        return sum(1 for r in results if isinstance(r, dict)) if isinstance(results, list) else None
    except (ValueError, OSError):
        return None


def _json_or_none(text: str) -> Any:
    try:
        return _json(text)
    except ValueError:
        return None


def _read_back(
    source: Path,
    expected: int | None,
    folder: Path,
    env: dict[str, str],
    problems: Problems,
    *,
    brief: bool = False,
) -> None:
    """``agent report`` to every format, ``agent extract`` both formats, ``agent merge``
    (``brief``: one report and one extract format, for results agent eval just wrote)."""
    name = source.name
    for suffix in (".html",) if brief else (".json", ".md", ".html", ".xml"):
        target = folder / f"report{suffix}"
        run = run_agent(["report", name, "-o", target.name], cwd=folder, env=env, bound=BOUND)
        if problems.of_run(run) and run.code == 0:
            _check_rendered(run, target, expected, problems)
    for fmt in ("markdown",) if brief else ("markdown", "json"):
        out = folder / f"extracted-{fmt}"
        before = set(_files(folder))
        run = run_agent(
            ["extract", name, "-o", out.name, "--format", fmt], cwd=folder, env=env, bound=BOUND
        )
        problems.of_run(run)
        escaped = [p for p in set(_files(folder)) - before if out not in p.parents]
        if escaped:
            problems.append(f"{_short(run.show())}: wrote outside {out.name}/: {escaped[:3]}")
    clean = folder / "clean.jsonl"
    clean.write_text(_clean_results(), encoding="utf-8")
    run = run_agent(
        ["merge", name, clean.name, "-o", "merged.jsonl"], cwd=folder, env=env, bound=BOUND
    )
    if problems.of_run(run) and run.code in (0, 1) and expected is not None:
        try:
            merged, _ = _parse_output(folder / "merged.jsonl")
            assert merged is not None
        except (ValueError, OSError) as error:
            problems.append(f"lost results: {_short(run.show())}: merged.jsonl: {error}")
        else:
            if len(merged) != expected + 1:
                problems.append(
                    f"lost results: {_short(run.show())}: {len(merged)} results, "
                    f"wanted {expected} + 1"
                )


def _files(folder: Path) -> Iterator[Path]:
    return (p for p in folder.rglob("*") if not p.is_dir())


def _check_rendered(run: Run, target: Path, expected: int | None, problems: Problems) -> None:
    """A report that was written holds every result (JSON and JUnit are countable)."""
    command = _short(run.show())
    try:
        results, _ = _parse_output(target)
    except (ValueError, OSError) as error:
        problems.append(f"lost results: {command}: {target.name} is not whole: {error}")
        return
    if results is not None and expected is not None and len(results) < expected:
        problems.append(f"lost results: {command}: {len(results)} of {expected} results")


def _clean_results() -> str:
    """A small, valid results file with one result of an id no entry uses."""
    header = {"type": "header", "environment": {}, "metadata": {"started_at": "2026-01-01"}}
    result = {"type": "result", "id": CLEAN_ID, "status": "passed", "input": "x", "duration_ms": 1}
    summary = {"type": "summary", "total": 1, "passed": 1, "failed": 0, "skipped": 0,
               "errors": 0, "timeouts": 0, "duration_ms": 1, "pass_rate": 100.0}  # fmt: skip
    return "\n".join(json.dumps(r) for r in (header, result, summary)) + "\n"


def _resume(source: Path, folder: Path, env: dict[str, str], problems: Problems) -> None:
    """``agent eval --resume`` on a copy: a refusal leaves the file as it was; a resumed run
    keeps every finished result and adds every case not yet run."""
    resumed = folder / f"resume{source.suffix}"
    shutil.copyfile(source, resumed)
    before = resumed.read_bytes()
    kept = _result_ids(source)
    (folder / "standard.jsonl").write_text(STANDARD_CASES + "\n", encoding="utf-8")
    argv = ["eval", "hostile", "@standard.jsonl", "--resume", resumed.name, "--timeout", "3s"]
    run = run_agent(argv, cwd=folder, env=env, bound=BOUND)
    command = _short(run.show())
    if not problems.of_run(run):
        return
    if run.code == 2:
        if resumed.read_bytes() != before:
            problems.append(f"lost results: {command} refused the file but changed it")
        return
    try:
        results, _ = _parse_output(resumed)
    except (ValueError, OSError) as error:
        problems.append(f"lost results: {command}: the resumed file is not whole: {error}")
        return
    ids = Counter(_key(r.get("id")) for r in results or [] if isinstance(r, dict))
    missing_kept = [i for i in kept if i not in ids]
    missing_new = [i for i in STANDARD_IDS if i not in ids]
    if missing_kept:
        problems.append(f"lost results: {command} dropped kept results {missing_kept[:5]}")
    if missing_new:
        problems.append(f"{command}: cases not run on resume: {missing_new}")


def _result_ids(path: Path) -> list[Any]:
    """The hashable ids of the result objects in a results file (JSON Lines or a report)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (ValueError, OSError):
        return []
    records = [_json_or_none(line) for line in text.splitlines() if line.strip()]
    found = [r for r in records if isinstance(r, dict) and r.get("type") == "result"]
    if not found:
        report = _json_or_none(text)
        results = report.get("results") if isinstance(report, dict) else None
        found = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
    return [_key(r.get("id")) for r in found]


def _key(value: Any) -> Any:
    """``value`` itself when it can be counted, else its JSON (an id may be a list)."""
    if value is None or isinstance(value, str | int | float):
        return value
    return json.dumps(value, default=str)
