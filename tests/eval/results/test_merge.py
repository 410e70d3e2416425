"""agent merge: shards written by the real writers, read back, merged, recomputed, rewritten."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import ConfigError
from agentcli.eval.reports import SUPPORTED_EXTENSIONS, LoadedReport, read_results
from agentcli.eval.reports.jsonl import JsonlWriter
from agentcli.eval.results.merge import (
    MergedReport,
    exit_code_for,
    merge_files,
    merge_reports,
    write_merged,
)
from agentcli.eval.results.model import CaseResult, RunHeader, RunSummary, summarize
from agentcli.eval.run.sharding import select_shard
from agentcli.eval.stats.stability import StabilityTracker, stability_for_case, stability_summary


def _result(case_id: str, status: str, duration: int, run: int | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": case_id,
        "status": status,
        "input": f"input of {case_id}",
        "output": f"output of {case_id}",
        "duration_ms": duration,
        "assertions": [{"type": "contains", "passed": status == "passed", "message": "m"}],
        "trace": {
            "completion": "x",
            "tool_calls": [],
            "next": None,
            "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5, "cost": 0.001},
        },
    }
    if run is not None:
        result["run"] = run
    return result


def _header(started: str = "2025-01-02T03:00:00+00:00", completed: str | None = None) -> dict:
    metadata: dict[str, Any] = {"started_at": started, "version": "0.1.0", "input_file": "in.jsonl"}
    if completed:
        metadata["completed_at"] = completed
    return {
        "type": "header",
        "environment": {"user_id": "u", "team_id": "t", "locale": "en"},
        "metadata": metadata,
    }


def _write_shard(
    path: Path,
    results: list[dict[str, Any]],
    *,
    duration_ms: int,
    agent_id: str = "tests.expense",
    connector: str = "scripted",
    header: dict[str, Any] | None = None,
    finish: bool = True,
) -> Path:
    """Write a results file the way ``agent eval`` does, with the real JSON Lines writer."""
    writer = JsonlWriter(path)
    writer.open(RunHeader.from_dict(header or _header()))
    for result in results:
        writer.add(CaseResult.from_dict(copy.deepcopy(result)))
    if finish:
        objects = [CaseResult.from_dict(r) for r in results]
        summary = summarize(
            objects, agent_id=agent_id, connector=connector, duration_ms=duration_ms
        )
        writer.close(summary)
    return path


def _plain_results() -> list[dict[str, Any]]:
    statuses = ["passed", "failed", "passed", "error", "timeout", "skipped", "passed", "passed"]
    return [_result(f"case-{i}", s, 100 + 37 * i) for i, s in enumerate(statuses)]


def _stability_runs() -> list[dict[str, Any]]:
    plan = {"alpha": "ppfp", "beta": "pppp", "gamma": "fpff", "delta": "pppf"}
    names = {"p": "passed", "f": "failed"}
    return [
        _result(case_id, names[s], 50 * i + len(case_id), run=i)
        for case_id, statuses in plan.items()
        for i, s in enumerate(statuses, 1)
    ]


# -- recomputing ---------------------------------------------------------------------------


def test_merging_shards_gives_the_summary_of_a_single_run(tmp_path: Path) -> None:
    everything = _plain_results()
    paths = [
        _write_shard(
            tmp_path / f"shard{i}.jsonl", select_shard(everything, i, 3), duration_ms=1000 * i
        )
        for i in range(1, 4)
    ]
    assert all(read_results(p).results for p in paths)  # the hash spread the cases around
    merged = merge_files(paths)
    single = summarize(
        [CaseResult.from_dict(r) for r in everything],
        agent_id="tests.expense",
        connector="scripted",
        duration_ms=3000,  # shards ran side by side: wall time is the longest
    )
    assert merged.summary.to_dict() == {**single.to_dict(), "total_duration_ms": 6000}
    assert merged.stability == []
    assert sorted(r.id for r in merged.results) == sorted(r["id"] for r in everything)
    assert merged.warnings == []
    assert merged.exit_code() == 1  # failed, error and timeout among them
    assert merged.header.metadata["merged_from"] == [str(p) for p in paths]
    assert merged.header.environment == {"user_id": "u", "team_id": "t", "locale": "en"}


def test_results_keep_their_content_and_follow_first_appearance(tmp_path: Path) -> None:
    runs = _stability_runs()
    # alpha's runs split over two files, in scrambled order; gamma first in the second file.
    first = [runs[2], runs[0], *runs[4:8]]  # alpha 3, alpha 1, beta 1..4
    second = [runs[9], runs[8], runs[3], runs[1], *runs[10:]]  # gamma 2, 1, alpha 4, 2, ...
    a = _write_shard(tmp_path / "a.jsonl", first, duration_ms=10)
    b = _write_shard(tmp_path / "b.jsonl", second, duration_ms=20)
    merged = merge_files([a, b])
    order = [(r.id, r.run) for r in merged.results]
    assert order == [
        *(("alpha", i) for i in range(1, 5)),
        *(("beta", i) for i in range(1, 5)),
        *(("gamma", i) for i in range(1, 5)),
        *(("delta", i) for i in range(1, 5)),
    ]
    by_key = {(r["id"], r["run"]): r for r in runs}
    assert all(r.to_dict() == by_key[(r.id, r.run)] for r in merged.results)
    # Same inputs, same order: the same report, byte for byte.
    assert merge_files([a, b]) == merged


def test_stability_is_recomputed_like_a_single_stability_run(tmp_path: Path) -> None:
    runs = _stability_runs()
    ids = ["alpha", "beta", "gamma", "delta"]
    shards = [select_shard(runs, i, 2) for i in (1, 2)]
    assert all(shards)
    paths = [
        _write_shard(tmp_path / f"s{i}.jsonl", shard, duration_ms=500 * i)
        for i, shard in enumerate(shards, 1)
    ]
    merged = merge_files(paths, min_pass_rate=75)

    tracker = StabilityTracker(ids, runs=4)  # what one `agent eval --runs 4` would compute
    for result in reversed(runs):
        tracker.add(CaseResult.from_dict(result))
    first_seen = list(dict.fromkeys(r["id"] for shard in shards for r in shard))
    expected = sorted(tracker.results(), key=lambda s: first_seen.index(s.id))
    assert merged.stability == expected
    assert merged.stability_results() == [s.to_dict() for s in expected]

    single = summarize(
        [CaseResult.from_dict(r) for r in runs],
        agent_id="tests.expense",
        connector="scripted",
        duration_ms=1000,
    )
    single.extra.update(stability_summary(expected, min_pass_rate=75))
    single.extra["runs_per_case"] = 4  # the headers name no --runs: the highest run index
    assert merged.summary.to_dict() == {**single.to_dict(), "total_duration_ms": 1500}
    assert merged.summary.to_dict()["total_runs"] == 16 and merged.summary.to_dict()["stable"] == 1
    assert merged.summary.to_dict()["cases_below_threshold"] == ["gamma"]
    assert merged.exit_code() == 1
    assert merge_files(paths, min_pass_rate=25).exit_code() == 0


def test_inputs_stability_lines_are_not_trusted(tmp_path: Path) -> None:
    runs = [r for r in _stability_runs() if r["id"] == "alpha"]
    path = tmp_path / "lying.jsonl"
    writer = JsonlWriter(path)
    writer.open(RunHeader.from_dict(_header()))
    for result in runs:
        writer.add(CaseResult.from_dict(result))
    lie = {"id": "alpha", "runs": 4, "passed": 4, "pass_rate": 100.0, "stability": "stable"}
    summary = RunSummary.from_dict({"total": 4, "passed": 4, "duration_ms": 7, "agent_id": "a"})
    writer.close(summary, [lie])
    merged = merge_files([path])
    assert merged.stability == [stability_for_case("alpha", map(CaseResult.from_dict, runs))]
    assert merged.summary.to_dict()["passed"] == 3 and merged.summary.to_dict()["pass_rate"] == 75.0


# -- duplicates ------------------------------------------------------------------------------


def test_duplicate_result_in_two_files_names_both(tmp_path: Path) -> None:
    a = _write_shard(tmp_path / "a.jsonl", [_result("x", "passed", 1)], duration_ms=1)
    b = _write_shard(tmp_path / "b.jsonl", [_result("x", "failed", 2)], duration_ms=1)
    with pytest.raises(ConfigError) as info:
        merge_files([a, b])
    message = str(info.value)
    assert str(a) in message and str(b) in message and "'x'" in message
    assert info.value.hint == (
        "merge each shard once, or pass --allow-duplicates to keep the later one"
    )


def test_duplicate_run_is_detected_but_other_runs_are_not_duplicates(tmp_path: Path) -> None:
    two_runs = [_result("x", "passed", 1, run=1), _result("x", "passed", 1, run=2)]
    a = _write_shard(tmp_path / "a.jsonl", two_runs, duration_ms=1)
    b = _write_shard(tmp_path / "b.jsonl", [_result("x", "failed", 2, run=3)], duration_ms=1)
    assert len(merge_files([a, b]).results) == 3
    c = _write_shard(tmp_path / "c.jsonl", [_result("x", "failed", 2, run=2)], duration_ms=1)
    with pytest.raises(ConfigError, match=r"'x' run 2 appears in both .*a\.jsonl and .*c\.jsonl"):
        merge_files([a, b, c])


def test_duplicate_within_one_file(tmp_path: Path) -> None:
    a = _write_shard(
        tmp_path / "a.jsonl", [_result("x", "passed", 1), _result("x", "failed", 1)], duration_ms=1
    )
    with pytest.raises(ConfigError, match=r"appears twice in .*a\.jsonl"):
        merge_files([a])


def test_allow_duplicates_keeps_the_later_file(tmp_path: Path) -> None:
    a = _write_shard(
        tmp_path / "a.jsonl", [_result("x", "failed", 1), _result("y", "passed", 1)], duration_ms=5
    )
    b = _write_shard(tmp_path / "b.jsonl", [_result("x", "passed", 9)], duration_ms=7)
    merged = merge_files([a, b], allow_duplicates=True)
    assert [(r.id, r.status) for r in merged.results] == [("x", "passed"), ("y", "passed")]
    assert merged.summary.to_dict()["total"] == 2 and merged.summary.to_dict()["failed"] == 0
    assert merged.exit_code() == 0
    assert len(merged.warnings) == 1 and str(b) in merged.warnings[0]


# -- inputs that differ or are damaged ---------------------------------------------------------


def test_differing_agents_and_connectors_are_warnings(tmp_path: Path) -> None:
    a = _write_shard(tmp_path / "a.jsonl", [_result("x", "passed", 1)], duration_ms=1)
    b = _write_shard(
        tmp_path / "b.jsonl",
        [_result("y", "passed", 1)],
        duration_ms=1,
        agent_id="other",
        connector="gpt-4o",
    )
    merged = merge_files([a, b])
    assert merged.summary.to_dict()["agent_id"] == "tests.expense"
    assert merged.summary.to_dict()["connector"] == "scripted"
    assert len(merged.warnings) == 2
    assert "'other'" in merged.warnings[0] and str(b) in merged.warnings[0]
    assert "'gpt-4o'" in merged.warnings[1]


def test_interrupted_input_counts_its_results_durations(tmp_path: Path) -> None:
    a = _write_shard(tmp_path / "a.jsonl", [_result("x", "passed", 100)], duration_ms=150)
    b = _write_shard(
        tmp_path / "b.jsonl",
        [_result("y", "passed", 400), _result("z", "passed", 300)],
        duration_ms=0,
        finish=False,
    )
    merged = merge_files([a, b])
    assert merged.summary.to_dict()["duration_ms"] == 700
    assert merged.summary.to_dict()["total_duration_ms"] == 850
    assert any("no summary line" in w for w in merged.warnings)  # the reader's warning kept


def test_metadata_spans_every_input(tmp_path: Path) -> None:
    a = _write_shard(
        tmp_path / "a.jsonl",
        [_result("x", "passed", 1)],
        duration_ms=1,
        header=_header("2025-01-02T03:00:05+00:00", "2025-01-02T03:10:00+00:00"),
    )
    b = _write_shard(
        tmp_path / "b.jsonl",
        [_result("y", "passed", 1)],
        duration_ms=1,
        header=_header("2025-01-02T04:00:00+01:00", "2025-01-02T04:20:00+01:00"),
    )
    metadata = merge_files([a, b]).header.metadata
    assert metadata["started_at"] == "2025-01-02T04:00:00+01:00"  # 03:00:00 UTC, the earlier
    assert metadata["completed_at"] == "2025-01-02T04:20:00+01:00"  # 03:20 UTC, the later
    assert metadata["version"] == "0.1.0"


def test_bad_status_and_run_are_repaired_with_a_warning_naming_the_line(tmp_path: Path) -> None:
    """An unknown status counts as an error (never a pass) and a run that is not a whole
    number is ignored; each is a warning naming the file and line, and nothing is lost."""
    bad = tmp_path / "bad.jsonl"
    lines = [
        {"type": "header"},
        {"type": "result", "id": "x", "status": "exploded"},
        {"type": "result", "id": "y", "status": "passed", "run": "one"},
    ]
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    merged = merge_files([bad])
    assert [(r.id, r.status) for r in merged.results] == [("x", "error"), ("y", "passed")]
    assert merged.results[1].run is None
    assert merged.summary.to_dict()["errors"] == 1 and merged.exit_code() == 1
    assert any(
        re.search(r"bad\.jsonl:2: result 'x': status is \"exploded\"", w) for w in merged.warnings
    )
    assert any(re.search(r"bad\.jsonl:3: result 'y': run is \"one\"", w) for w in merged.warnings)


def test_hostile_values_merge_without_crashing_or_losing_results(tmp_path: Path) -> None:
    """NaN/Infinity figures, results without ids, tool calls and assertions that are not
    objects: merged, every result kept, the figures that were not numbers ignored."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"type": "header", "environment": "x", "metadata": [1]}\n'
        '{"type": "result", "id": "n", "status": "passed", "duration_ms": NaN,'
        ' "trace": {"usage": {"cost": Infinity}, "tool_calls": [null, 5]}, "assertions": [null]}\n'
        '{"type": "result", "status": "passed"}\n'
        '{"type": "result", "id": ["a"], "status": "failed"}\n'
        '{"type": "summary", "total": 3, "duration_ms": Infinity, "pass_rate": NaN}\n',
        encoding="utf-8",
    )
    merged = merge_files([bad])
    assert [r.id for r in merged.results] == ["n", "", ""]  # two without ids: both kept
    assert merged.summary.to_dict()["total"] == 3 and merged.summary.to_dict()["duration_ms"] == 0
    first = merged.results[0]
    assert first.trace is not None and first.trace.tool_calls == [] and first.assertions == []
    out = write_merged(merged, tmp_path / "merged.jsonl")
    assert len(read_results(out).results) == 3


def test_stability_results_without_runs_are_dropped_with_a_warning(tmp_path: Path) -> None:
    yao = tmp_path / "yao.json"
    yao.write_text(
        json.dumps(
            {
                "summary": {"total": 1, "passed": 1, "agent_id": "expense", "duration_ms": 9},
                "results": [_result("x", "passed", 9)],
                "stability_results": [{"id": "T1", "runs": 2, "passed": 1, "pass_rate": 50.0}],
            }
        ),
        encoding="utf-8",
    )
    merged = merge_files([yao])
    assert merged.stability == [] and merged.summary.to_dict()["total"] == 1
    assert merged.warnings == [
        f"{yao}: 1 stability result without per-run results was dropped (stability is"
        " recomputed from the runs, and the merged results hold none of that case's)"
    ]


def test_stability_lines_of_cases_whose_runs_are_merged_are_replaced_without_a_warning(
    tmp_path: Path,
) -> None:
    # Shards as `agent eval --runs` writes them: every stability line beside its case's runs.
    runs = _stability_runs()
    paths = []
    for index in (1, 2):
        shard = select_shard(runs, index, 2)
        path = tmp_path / f"s{index}.jsonl"
        writer = JsonlWriter(path)
        header = _header()
        header["metadata"]["options"] = {"runs": "auto", "max_runs": 6}
        writer.open(RunHeader.from_dict(header))
        objects = [CaseResult.from_dict(copy.deepcopy(r)) for r in shard]
        for result in objects:
            writer.add(result)
        tracker = StabilityTracker(runs=4)
        for result in objects:
            tracker.add(result)
        summary = summarize(objects, agent_id="tests.expense", connector="scripted", duration_ms=5)
        writer.close(summary, [stats.to_dict() for stats in tracker.results()])
        paths.append(path)
    orphan = json.dumps({"type": "stability", "id": "gone", "runs": 2, "passed": 2})
    with paths[1].open("a", encoding="utf-8") as handle:  # two lines of a case never run
        handle.write(orphan + "\n" + orphan.replace("gone", "lost") + "\n")
    merged = merge_files(paths)
    assert [s.id for s in merged.stability] == list(dict.fromkeys(r.id for r in merged.results))
    assert merged.warnings == [
        f"{paths[1]}: 2 stability results without per-run results were dropped (stability is"
        " recomputed from the runs, and the merged results hold none of that case's)"
    ]
    assert merged.summary.extra["runs_per_case"] == 6  # --runs auto: what --max-runs allowed
    assert "attribution" not in merged.summary.extra  # no failure here says who it is on


def test_nothing_to_merge_and_unnamed_sources() -> None:
    with pytest.raises(ConfigError, match="nothing to merge"):
        merge_reports([])
    same = [
        LoadedReport(
            results=[CaseResult.from_dict(_result("x", "passed", 1))],
            summary=RunSummary.from_dict({"duration_ms": 1}),
        )
        for _ in range(2)
    ]
    with pytest.raises(ConfigError, match="in both input 1 and input 2"):
        merge_reports(same)
    with pytest.raises(ConfigError, match="in both left and right"):
        merge_reports(same, sources=["left", "right"])


# -- writing ------------------------------------------------------------------------------------


def _merged_stability(tmp_path: Path) -> MergedReport:
    runs = _stability_runs()
    a = _write_shard(tmp_path / "in-a.jsonl", select_shard(runs, 1, 2), duration_ms=100)
    b = _write_shard(tmp_path / "in-b.jsonl", select_shard(runs, 2, 2), duration_ms=200)
    return merge_files([a, b], min_pass_rate=75)


@pytest.mark.parametrize("ext", SUPPORTED_EXTENSIONS)
def test_merged_report_is_written_in_every_format(tmp_path: Path, ext: str) -> None:
    merged = _merged_stability(tmp_path)
    path = write_merged(merged, tmp_path / f"merged{ext}")
    text = path.read_text(encoding="utf-8")
    ids = ["alpha", "beta", "gamma", "delta"]
    if ext in (".jsonl", ".json"):
        back = read_results(path)
        assert back.results == merged.results
        assert back.stability_results == merged.stability_results()
        assert back.summary == merged.summary
        assert back.header.metadata["merged_from"] == merged.sources
        assert back.warnings == []
        again = merge_files([path], min_pass_rate=75)  # a merged file merges to itself
        assert again.summary.to_dict() == {**merged.summary.to_dict(), "total_duration_ms": 200}
        assert again.stability == merged.stability
    elif ext == ".xml":
        root = ET.parse(path).getroot()
        names = [case.attrib["name"] for case in root.iter("testcase")]
        assert names == [f"{r.id} run {r.run}" for r in merged.results]
        assert root.attrib["tests"] == "16"
    elif ext in (".html", ".htm"):
        match = re.search(
            r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S
        )
        assert match is not None
        data = json.loads(match.group(1))
        assert data["summary"]["overall_pass_rate"] == merged.summary.to_dict()["overall_pass_rate"]
        stability = text.split('<section id="stability">', 1)[1].split("</section>", 1)[0]
        assert all(f"<code>{s.id}</code>" in stability for s in merged.stability)
    else:
        assert all(f"`{case_id}`" in text for case_id in ids)
        assert "Stability" in text and "Mean pass rate" in text


def test_write_merged_refuses_an_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown extension"):
        write_merged(_merged_stability(tmp_path), tmp_path / "merged.pdf")


# -- exit codes -------------------------------------------------------------------------------


def test_exit_code_rules() -> None:
    ok = RunSummary(total=3, passed=3)
    assert exit_code_for(ok, []) == 0
    for key in ("failed", "errors", "timeouts"):
        assert exit_code_for(replace(ok, **{key: 1}), []) == 1
    assert exit_code_for(RunSummary(total=1, skipped=1), []) == 0
    four_of_five = stability_for_case(
        "c",
        [
            CaseResult.from_dict(_result("c", "passed" if i < 5 else "failed", 1, run=i))
            for i in range(1, 6)
        ],
    )
    failed = replace(ok, failed=1)
    # Under stability runs the per-case threshold decides, not the failed run.
    assert exit_code_for(failed, [four_of_five]) == 1
    assert exit_code_for(failed, [four_of_five], 80.0) == 0
    assert exit_code_for(failed, [four_of_five], 80.01) == 1
    all_skipped = stability_for_case("s", [CaseResult.from_dict(_result("s", "skipped", 1, run=1))])
    assert exit_code_for(ok, [all_skipped]) == 0


# -- fsspec URLs ---------------------------------------------------------------------------


def _shards_in_memory(folder: str, tmp_path: Path) -> list[dict[str, Any]]:
    """Write three shards locally, then copy them into fsspec's memory filesystem."""
    import fsspec

    everything = _plain_results()
    memory = fsspec.filesystem("memory")
    for i in range(1, 4):
        local = _write_shard(
            tmp_path / f"shard-{i}.jsonl", select_shard(everything, i, 3), duration_ms=10 * i
        )
        memory.pipe(f"/{folder}/shard-{i}.jsonl", local.read_bytes())
    memory.pipe(f"/{folder}/notes.txt", b"not a results file")  # the glob must skip it
    return everything


def test_merge_reads_a_glob_of_memory_urls_like_local_files(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentcli.cli.main import _register, app

    _register()
    everything = _shards_in_memory("run-42", tmp_path)
    out = tmp_path / "all.jsonl"
    result = CliRunner().invoke(app, ["merge", "memory://run-42/shard-*.jsonl", "-o", str(out)])
    assert result.exit_code == 1, result.output  # the shards hold failures: eval's exit code
    assert "merged 3 files: 8 results" in result.output
    merged = read_results(out)
    assert sorted(r.id for r in merged.results) == sorted(r["id"] for r in everything)
    assert merged.header.metadata["merged_from"] == [
        f"memory:///run-42/shard-{i}.jsonl" for i in range(1, 4)
    ]
    local = merge_files([tmp_path / f"shard-{i}.jsonl" for i in range(1, 4)])
    assert merged.summary.to_dict() == local.summary.to_dict()


def test_merge_reads_file_urls_and_mixes_them_with_paths(tmp_path: Path) -> None:
    everything = _plain_results()
    paths = [
        _write_shard(tmp_path / f"s{i}.jsonl", select_shard(everything, i, 2), duration_ms=5)
        for i in (1, 2)
    ]
    merged = merge_files([f"file://{paths[0]}", paths[1]])
    assert sorted(r.id for r in merged.results) == sorted(r["id"] for r in everything)


def test_url_inputs_that_cannot_be_read_are_clear_errors(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentcli.cli.main import _register, app

    _register()
    out = str(tmp_path / "all.jsonl")
    cases = {
        "memory://nothing-here/shard-*.jsonl": "no results files match this pattern",
        "memory://nothing-here/shard-1.jsonl": "no such results file",
        "nope://bucket/x.jsonl": "cannot open this URL: Protocol not known: nope",
    }
    for url, message in cases.items():
        result = CliRunner().invoke(app, ["merge", url, "-o", out])
        assert result.exit_code == 2, (url, result.output)
        assert message in result.output and "Traceback" not in result.output
    import fsspec

    fsspec.filesystem("memory").pipe("/bad/shard.jsonl", b"\xff\xfe garbage")
    result = CliRunner().invoke(app, ["merge", "memory://bad/shard.jsonl", "-o", out])
    assert result.exit_code == 2 and "not a UTF-8 text file" in result.output
