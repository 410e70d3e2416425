"""``agent eval --watch``: run, then wait for changes (watchfiles: the OS's notifications,
debounced) to the case files (a suite's, or the one the command line's input names), the
``--ctx`` file, the assistant packages (prompts, hooks, tools, scripted rules) and the
project config, and run again only the suites a change touches (every one when the config,
the connectors file or the ``--ctx`` file changes). Ctrl-C or SIGTERM stops it (exit 130).

Results written by the runs themselves (the runs folder, ``output-*.jsonl`` beside case
files, ``-o`` reports, cassettes) are not changes: they would start a run again forever.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.cli.errors import report
from agentcli.cli.suite_runs import EXIT_INTERRUPTED, RunOne, Target, run_targets, targets_of
from agentcli.errors import AgentCliError
from agentcli.eval.run.options import EvalOptions

if TYPE_CHECKING:
    from watchfiles import Change

__all__ = ["DEBOUNCE_MS", "Watched", "watch_runs"]

# Changes within this many milliseconds are one batch: an editor's save (write, rename,
# chmod) or a `git checkout` starts one run, not several.
DEBOUNCE_MS = 300
_IGNORED_PARTS = frozenset({".agentcli", ".git", "__pycache__", "cassettes", ".venv"})


@dataclass(frozen=True, slots=True)
class Watched:
    """What one target depends on: its case file, its assistant's package folder and the
    other files its run reads (``files``: an input's case file, the ``--ctx`` file)."""

    target: Target
    package_dir: Path | None
    files: frozenset[Path] = frozenset()

    def touched_by(self, path: Path) -> bool:
        """Whether a change of ``path`` can change this target's run."""
        if path in self.files:
            return True
        if self.target.case_file is not None and path == self.target.case_file:
            return True
        return self.package_dir is not None and path.is_relative_to(self.package_dir)


def watch_runs(
    options: EvalOptions, targets: list[Target], run_one: RunOne, json_events: bool, verbose: bool
) -> int:
    """Run ``targets``, then again on every change until Ctrl-C or SIGTERM; 130 at the end."""
    from agentcli.assistant.state import terminate_as_interrupt

    # Between runs SIGTERM stops the watch as Ctrl-C does (a run takes the signals itself).
    with terminate_as_interrupt():
        return _watch(options, targets, run_one, json_events, verbose)


def _watch(
    options: EvalOptions, targets: list[Target], run_one: RunOne, json_events: bool, verbose: bool
) -> int:
    """The watch itself: 130 when Ctrl-C (or SIGTERM) or an interrupted run ends it."""
    try:
        _run(options, targets, run_one, json_events, verbose)
        while True:  # one watcher for as long as the config (so the watched paths) holds
            watched = [_watched(options, target) for target in targets]
            config_files = _config_files(options)
            for changed in _changes(options, watched):
                if changed & config_files:
                    _say(f"{_names(changed & config_files, options.cwd)} changed: re-running all")
                    reloaded = _reload(options)
                    if reloaded is not None:
                        options, targets = reloaded
                        _run(options, targets, run_one, json_events, verbose)
                    break
                affected = _affected(watched, changed)
                if affected:
                    suites = sorted({t.suite for t in affected if t.suite})
                    which = f"suite {', '.join(suites)}" if suites else "the input"
                    _say(f"{_names(changed, options.cwd)} changed: re-running {which}")
                    _run(options, affected, run_one, json_events, verbose)
    except KeyboardInterrupt:
        _say("stopped watching")
        return EXIT_INTERRUPTED
    except _Interrupted:
        return EXIT_INTERRUPTED


class _Interrupted(Exception):
    """A run ended by Ctrl-C: the watch ends too."""


def _run(
    options: EvalOptions, targets: list[Target], run_one: RunOne, json_events: bool, verbose: bool
) -> None:
    """Run the targets; bad input is shown and the watch goes on (the fix is a change away)."""
    try:
        code = run_targets(options, targets, run_one, json_events, verbose)
    except AgentCliError as error:
        report(error)
        code = error.exit_code
    if code == EXIT_INTERRUPTED:
        raise _Interrupted
    _say("watching for changes (Ctrl-C stops)")


def _affected(watched: Iterable[Watched], changed: set[Path]) -> list[Target]:
    """The targets of every suite a change touches (a suite runs whole, as it would alone)."""
    watched = list(watched)
    touched = {w.target for w in watched if any(w.touched_by(path) for path in changed)}
    suites = {t.suite for t in touched}
    return [
        w.target
        for w in watched
        if w.target in touched or (w.target.suite in suites and w.target.suite)
    ]


def _changes(options: EvalOptions, watched: list[Watched]) -> Iterator[set[Path]]:
    """The changed paths (absolute), batch by batch, of what the targets depend on. The
    watcher lives on while a batch is run: changes made meanwhile come in the next."""
    from watchfiles import DefaultFilter, watch

    default = DefaultFilter()
    produced = _produced(options)

    def relevant(change: Change, path: str) -> bool:
        return default(change, path) and not _is_produced(Path(path), produced)

    for changes in watch(*_roots(options, watched), watch_filter=relevant, debounce=DEBOUNCE_MS):
        paths = {Path(path).absolute() for _change, path in changes}
        if paths:
            yield paths


def _roots(options: EvalOptions, watched: list[Watched]) -> list[Path]:
    """The folders and files to watch: each package folder, each case file's folder and the
    config files (files outside any package are watched through their folder)."""
    roots: set[Path] = set()
    for item in watched:
        if item.package_dir is not None:
            roots.add(item.package_dir)
        if item.target.case_file is not None:
            roots.add(item.target.case_file.parent)
        roots.update(path.parent for path in item.files)
    roots.update(path for path in _config_files(options) if path.exists())
    # A folder inside another watched folder adds nothing (watches are recursive).
    return sorted(
        root
        for root in roots
        if not any(root != o and root.is_relative_to(o) for o in roots if o.is_dir())
    )


def _produced(options: EvalOptions) -> list[Path]:
    """Files and folders the runs write."""
    from agentcli.project.runs import runs_folder

    produced = []
    if options.project is not None and options.project.root is not None:
        produced.append(runs_folder(options.project))
    if options.output is not None:
        output = options.output.absolute()
        produced += [output, output.with_name(output.name + ".jsonl")]
    if options.cassettes is not None:
        produced.append(options.cassettes.absolute())
    return produced


def _is_produced(path: Path, produced: list[Path]) -> bool:
    """Whether ``path`` is one of the runs' own outputs (results, reports, cassettes)."""
    from agentcli.eval.reports._files import temp_target

    # A results file or report is written to a hidden temporary beside it, then renamed
    # over it: that name is the file's own (else results beside a case file in a package
    # would start a run after every run).
    target = temp_target(path.name)
    if target is not None:
        path = path.with_name(target)
    if path.name.startswith("output-") or path.name.startswith(".latest-"):
        return True
    if _IGNORED_PARTS.intersection(path.parts):
        return True
    return any(path == item or path.is_relative_to(item) for item in produced)


def _config_files(options: EvalOptions) -> set[Path]:
    """The project config and connectors files: a change re-runs everything."""
    project = options.project
    files = set()
    if project is not None and project.path is not None:
        files.add(project.path.absolute())
    if options.connectors_file is not None:
        files.add(options.connectors_file.absolute())
    return files


def _reload(options: EvalOptions) -> tuple[EvalOptions, list[Target]] | None:
    """The options and targets under the changed project config (the command line's
    options kept); None, and the error shown, when it is now bad input."""
    from agentcli.eval.run.project_defaults import with_project
    from agentcli.project import load_project

    try:
        renewed = with_project(replace(options), load_project(options.cwd), renew=True)
        return renewed, targets_of(renewed)
    except AgentCliError as error:
        report(error)
        _say("watching for changes (Ctrl-C stops)")
        return None


def _watched(options: EvalOptions, target: Target) -> Watched:
    """What ``target``'s run depends on: an input's case file (a suite's case file is the
    target's own), the ``--ctx`` file (every run reads it) and the package folder."""
    case_file = target.case_file or _input_case_file(options)
    files = {case_file} if case_file is not None else set()
    if options.ctx_file is not None:
        files.add((options.cwd / options.ctx_file).resolve())
    return Watched(target, _package_dir(options, case_file), frozenset(files))


def _input_case_file(options: EvalOptions) -> Path | None:
    """The case file the command line's input names (``@cases.jsonl`` or a path), resolved;
    None for a message or generated cases, or when it cannot be told now (the run says why)."""
    from agentcli.eval.run.request import classify_input

    if not options.input:
        return None
    try:
        spec = classify_input(options.input, options.cwd)
    except AgentCliError:
        return None
    return spec.path if spec.kind == "file" else None


def _package_dir(options: EvalOptions, case_file: Path | None) -> Path | None:
    """The package folder a run of ``case_file`` (None: of a message) is against (None when
    it cannot be told now: the run itself will say why)."""
    from agentcli.assistant.package import find_assistants_root, find_package_dir, resolve_assistant

    try:
        root = find_assistants_root(options.cwd, options.root)
        name = options.assistant
        if name is None and case_file is not None:
            found = find_package_dir(case_file.parent)
            if found is not None:
                return found.absolute()
            name = options.default_assistant
        if name is None:
            found = find_package_dir(options.cwd)
            return found.absolute() if found is not None else None
        return Path(resolve_assistant(name, root=root, cwd=options.cwd).path).absolute()
    except AgentCliError:
        return None


def _names(paths: set[Path], cwd: Path) -> str:
    """Up to three changed paths, relative to ``cwd``."""
    shown = sorted(str(p.relative_to(cwd)) if p.is_relative_to(cwd) else str(p) for p in paths)
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return ", ".join(shown[:3]) + more


def _say(message: str) -> None:
    """A line of the watch itself, on stderr (stdout stays the runs', NDJSON under --json)."""
    sys.stderr.write(f"watch: {message}\n")
    sys.stderr.flush()
