"""``agent eval --baseline FILE [--gate regressions]``: the baseline is read before the run
(a bad file is bad input, exit 2, before any case runs); as the run ends its results file is
read back, compared with it, and the diff's summary shown after the run's own summary.

Without ``--gate`` the exit code stays the run's; with ``--gate regressions`` it is 1 only
when a case that passed in the baseline fails now (under ``--runs``: a significant fall of
its pass rate), and 0 when every failure was already failing there (or is a new case).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import ConfigError
from agentcli.eval.results.reader import read_results

from .compute import diff_runs
from .console import summary_lines
from .model import RunDiff
from .sources import LoadedRun, load_run, source_of

if TYPE_CHECKING:
    from agentcli.eval.run.options import EvalOptions
    from agentcli.eval.run.view import EvalView

__all__ = ["gate_run", "load_baseline", "show_diff"]

EXIT_OK, EXIT_FAILED = 0, 1


def load_baseline(options: EvalOptions) -> LoadedRun | None:
    """The ``--baseline`` results, read before anything runs (``None`` without one)."""
    if options.baseline is None:
        if options.gate is not None:
            raise ConfigError(
                f"--gate {options.gate} needs --baseline FILE: the results to gate against"
            )
        return None
    if not options.baseline.is_file():
        raise ConfigError(
            f"--baseline {options.baseline}: no such results file",
            hint="give the results file of the run to compare with (e.g. main's artifact)",
        )
    return load_run(options.baseline)


def gate_run(
    baseline: LoadedRun, results: Path, options: EvalOptions, view: EvalView, code: int
) -> int:
    """Compare the finished run's ``results`` file with ``baseline``, show the summary, and
    return the exit code: ``code`` (the run's), or under ``--gate`` the gate's verdict."""
    for warning in baseline.warnings:
        view.warning(warning)
    loaded = read_results(results)
    diff = diff_runs(
        baseline.results,
        loaded.results,
        base_source=baseline.source,
        new_source=source_of(loaded, str(results)),
        alpha=options.alpha,
        include_infra=options.include_infra,
    )
    show_diff(diff, view)
    if options.gate != "regressions":
        return code
    regressions = len(diff.regressions)
    if regressions:
        ids = ", ".join(case.id for case in diff.regressions)
        view.error(f"Gate: {regressions} regression(s) against the baseline: {ids}")
        return EXIT_FAILED
    still = len(diff.of_kind("still_failing"))
    already = f" ({still} case(s) already failing in the baseline)" if still else ""
    view.info(f"Gate: no regressions against the baseline{already}")
    return EXIT_OK


def show_diff(diff: RunDiff, view: EvalView) -> None:
    """The diff's summary through the run's view: regressions as errors, the rest as info."""
    view.section(f"Baseline: {diff.base.label}")
    for line in summary_lines(diff):
        if line.tone == "bad":
            view.error(line.text)
        else:
            view.info(line.text)
