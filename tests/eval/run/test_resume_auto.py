"""``--resume`` of a ``--runs auto`` run: a case whose kept runs already decided it is kept
as it is, a case cut off mid-way goes on from its kept runs (its stopping rule sees them
first), and the results, stability lines and summary figures are those of the same run
made without the interruption (under ``--seed``: the same draws)."""

from __future__ import annotations

import signal

from agentcli.eval.reports import read_results
from tests.eval.run.coin import agent, calls, coin_project, start_agent, wait_for_calls

# Under seed 11: steady is decided in 7 runs (the fewest at the 80% bar), mostly goes on to
# all 10 (its pass rate stays between the test's bounds), coin and weak take 7 each.
CASES = [("steady", 100), ("mostly", 85), ("coin", 60), ("weak", 30)]
RUN = ("eval", "coin", "@cases.jsonl", "--runs", "auto", "--seed", "11", "--parallel", "1")


def untimed(value):
    """``value`` without its wall-time figures (no two runs take the same time)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if "duration" not in k}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def runs_of(path):
    """``(id, run, status, output)`` of every result of ``path``, in file order."""
    return [(r.id, r.run, r.status, r.output) for r in read_results(path).results]


def test_an_interrupted_runs_auto_run_resumes_to_what_it_would_have_been(tmp_path):
    root = coin_project(tmp_path, CASES)
    whole = agent(root, *RUN, "-o", "whole.jsonl")
    assert whole.returncode in (0, 1), whole.stderr
    expected = runs_of(root / "whole.jsonl")
    per_case = {case_id: sum(1 for r in expected if r[0] == case_id) for case_id, _ in CASES}
    assert per_case == {"steady": 7, "mostly": 10, "coin": 7, "weak": 7}
    (root / "calls.log").unlink()

    # Interrupt during mostly's 9th run: steady is decided; mostly has 8 runs, past the
    # fewest the test decides in, and still undecided.
    interrupted_at = per_case["steady"] + 9
    process = start_agent(root, *RUN, "-o", "part.jsonl", delay=0.5)
    wait_for_calls(root, interrupted_at)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT, stderr
    assert "Traceback" not in stderr
    kept = runs_of(root / "part.jsonl")
    assert kept == expected[: per_case["steady"] + 8]
    (root / "calls.log").unlink()

    resumed = agent(root, *RUN, "--resume", "part.jsonl")
    assert resumed.returncode == whole.returncode, resumed.stdout[-2000:] + resumed.stderr
    assert f"Resume: part.jsonl ({len(kept)} finished results kept)" in resumed.stdout
    assert "--resume cannot" not in resumed.stdout + resumed.stderr
    made = calls(root)
    assert len(made) == len(expected) - len(kept)  # no kept run was made again
    assert not [text for text in made if text.startswith("pass 100%")]  # steady: kept as is
    assert sum(1 for text in made if text.startswith("pass 85%")) == 2  # mostly: runs 9, 10

    assert runs_of(root / "part.jsonl") == expected  # the same runs, in the same order
    after, before = read_results(root / "part.jsonl"), read_results(root / "whole.jsonl")
    assert after.warnings == []
    assert untimed(after.stability_results) == untimed(before.stability_results)
    assert after.summary is not None and before.summary is not None
    summary, reference = after.summary.to_dict(), before.summary.to_dict()
    assert untimed(summary) == untimed(reference)
    assert summary["adaptive"] == reference["adaptive"]  # runs used: kept ones counted once
    assert summary["adaptive"]["runs_used"] == 31
    mostly = next(item for item in after.stability_results if item["id"] == "mostly")
    assert (mostly["runs"], mostly["passed"]) == (10, 7) and mostly["pass_hat_k"]["10"] == 0


def test_cases_cut_off_side_by_side_under_parallel_resume_to_the_same_figures(tmp_path):
    """Under ``--parallel`` an interrupt leaves several cases part-way, each with the runs it
    finished; every one goes on from its own, and the figures match the whole run's."""
    root = coin_project(tmp_path, CASES)
    run = (*RUN[:-1], "3")  # --parallel 3
    whole = agent(root, *run, "-o", "whole.jsonl")
    assert whole.returncode in (0, 1), whole.stderr
    (root / "calls.log").unlink()
    process = start_agent(root, *run, "-o", "part.jsonl", delay=0.5)
    wait_for_calls(root, 8)  # about three runs into each of the first three cases
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT, stderr
    kept = runs_of(root / "part.jsonl")
    cut = {r[0] for r in kept}
    assert len(cut) >= 2 and len(kept) < 31, kept  # more than one case part-way
    (root / "calls.log").unlink()

    resumed = agent(root, *run, "--resume", "part.jsonl")
    assert resumed.returncode == whole.returncode, resumed.stdout[-2000:] + resumed.stderr
    assert len(calls(root)) == 31 - len(kept)
    assert sorted(runs_of(root / "part.jsonl")) == sorted(runs_of(root / "whole.jsonl"))
    after, before = read_results(root / "part.jsonl"), read_results(root / "whole.jsonl")
    assert untimed(after.stability_results) == untimed(before.stability_results)
    assert after.summary is not None and before.summary is not None
    assert untimed(after.summary.to_dict()) == untimed(before.summary.to_dict())
