"""``agent eval`` without an input, in a project: every suite of ``agentcli.yml`` (or those
``--suite`` names) runs, one run per case file, each writing its own results file; then a
recap line per file. The worst exit code wins (bad input and interrupts stop at once)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.eval.run.options import EvalOptions
from agentcli.project.config import CONFIG_FILE

__all__ = ["RunOne", "Target", "run_targets", "targets_of"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

RunOne = Callable[[EvalOptions, bool, bool], int]


@dataclass(frozen=True, slots=True)
class Target:
    """One run of an invocation: a case file of a suite, or (``case_file`` None) the input
    the command line gave."""

    suite: str | None
    case_file: Path | None

    def label(self, cwd: Path) -> str:
        """How the recap names its case file."""
        return "input" if self.case_file is None else _relative(self.case_file, cwd)


def _relative(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it is under it."""
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)


NO_INPUT_HINT = (
    "agent eval expense @assistants/expense/tests/inputs.jsonl, or add suites to "
    f"{CONFIG_FILE} and run agent eval (agent eval --help lists the options)"
)


def targets_of(options: EvalOptions) -> list[Target]:
    """The runs of the invocation: its input, else the case files of the selected suites
    (every suite without ``--suite``)."""
    if options.input or options.scripts:
        if options.suites:
            raise ConfigError(
                f"give an input or --suite {options.suites[0]}, not both",
                hint="--suite runs the case files the project config names for it",
            )
        return [Target(None, None)]
    project = options.project
    if project is None or project.path is None or project.root is None:
        raise ConfigError(
            "agent eval needs an input: a message, @cases.jsonl or --scripts MODULE "
            f"(no {CONFIG_FILE} with suites found from {options.cwd})",
            hint=NO_INPUT_HINT,
        )
    suites = project.suites.value
    if not suites:
        raise ConfigError(
            f"{project.path}: no suites defined, so agent eval needs an input",
            hint="add suites: {smoke: 'assistants/*/tests/*.jsonl'} to it, or name a case file",
        )
    targets: list[Target] = []
    seen: set[Path] = set()
    for name in options.suites or list(suites):
        suite = project.suite(name)
        for path in suite.case_files(project.root):
            if path.resolve() not in seen:  # a file in two suites runs once, in the first
                seen.add(path.resolve())
                targets.append(Target(name, path))
    if len(targets) > 1 and options.output is not None:
        shown = "-" if str(options.output) == "-" else str(options.output)
        raise ConfigError(
            f"-o {shown} names one results file, and these suites run "
            f"{len(targets)} case files (each writes its own)",
            hint="drop -o (each case file's results go to the runs folder), or run one case "
            "file: agent eval --suite NAME with a suite of one file, or agent eval @FILE -o ...",
        )
    return targets


def options_for(options: EvalOptions, target: Target) -> EvalOptions:
    """A fresh copy of the options for one run (a run fills in some of its options)."""
    if target.case_file is None:
        return replace(options, connectors=list(options.connectors))
    return replace(
        options,
        input=str(target.case_file),
        suites=[target.suite] if target.suite else [],
        connectors=list(options.connectors),
    )


def run_targets(
    options: EvalOptions, targets: list[Target], run_one: RunOne, json_events: bool, verbose: bool
) -> int:
    """Run every target; the recap after several; the worst exit code (bad input or an
    interrupt stops the rest)."""
    from agentcli.eval.run.selection import NothingSelected

    if len(targets) == 1 and targets[0].case_file is None:
        return run_one(options_for(options, targets[0]), json_events, verbose)
    recap: list[tuple[Target, str]] = []
    code = EXIT_OK
    for target in targets:
        try:
            result = run_one(options_for(options, target), json_events, verbose)
        except NothingSelected:  # a file of a suite with none of the tags asked for
            recap.append((target, "skipped (no case selected)"))
            continue
        if result in (EXIT_USAGE, EXIT_INTERRUPTED):
            return result
        recap.append((target, _outcome(options, result)))
        code = max(code, result)
    _print_recap(recap, options.cwd, json_events)
    if recap and all(outcome.startswith("skipped") for _, outcome in recap):
        raise ConfigError(
            "no case of the suites matches the selection",
            hint="check the tags: --dry-run lists the cases a run would take",
        )
    return code


def _outcome(options: EvalOptions, result: int) -> str:
    """A file's recap word: a --dry-run or --estimate ran none of its cases, so it neither
    passed nor failed."""
    if result != EXIT_OK:
        return f"failed (exit {result})"
    if options.dry_run:
        return "not run (--dry-run)"
    if options.estimate:
        return "not run (--estimate)"
    return "passed"


def _print_recap(recap: list[tuple[Target, str]], cwd: Path, json_events: bool) -> None:
    """``Suites: 3 case files`` and a line per file (on stderr under --json)."""
    out = sys.stderr if json_events else sys.stdout
    files = "case file" if len(recap) == 1 else "case files"
    lines = [f"Suites: {len(recap)} {files}"]
    suite_width = max(len(target.suite or "") for target, _ in recap)
    file_width = max(len(target.label(cwd)) for target, _ in recap)
    lines += [
        f"  {target.suite or '':<{suite_width}}  {target.label(cwd):<{file_width}}  {outcome}"
        for target, outcome in recap
    ]
    out.write("\n".join(lines) + "\n")
    out.flush()
