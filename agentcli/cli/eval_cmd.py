"""``agent eval``: run eval cases (or one message) against an assistant.

Its options are generated from the fields of ``EvalOptions`` (eval/run/options.py) the
first time the command is used (parsed, or its help shown), so ``agent --help`` never
imports the eval layer.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from agentcli import collector
from agentcli.cli.errors import guarded

if TYPE_CHECKING:
    from typer._click import Context, Parameter  # typer >= 0.28 carries its own click

    from agentcli.eval.run.options import EvalOptions, FlagField

HELP = """Evaluate an assistant: a message, a file of cases, or script tests.

\b
Examples (from the project folder):
  agent eval expense 'submit $25 for lunch'                  one message, print the answer
  agent eval expense @assistants/expense/tests/inputs.jsonl  cases from a file (@ = file)
  agent eval -i assistants/expense/tests/inputs.jsonl        assistant found from the file
  agent eval expense @assistants/expense/tests/inputs.jsonl --parallel 8 -o report.html
  agent eval expense @assistants/expense/tests/inputs.jsonl --run '^submit' -v

-o never replaces an input or a file that is not a results file (unless --force); a
.json/.md/.html/.xml report also streams every result to FILE.jsonl beside it
(report.html -> report.html.jsonl), which --resume and agent report read.

-c given several times (or --matrix FILE) runs every case on each connector and ends
with a case x connector table.

In a project (agentcli.yml found walking up, or [tool.agentcli] in pyproject.toml),
agent eval alone runs every suite it names (--suite NAME: one of them) and results go to
its runs folder (.agentcli/runs/); agent config shows the settings and their sources.

Exit codes: 0 all passed, 1 a case failed/errored/timed out (in a matrix: any cell,
or with --matrix-pass any a case no connector passed; or results could not be written
mid-run), 2 bad input, 130 interrupted.
"""


Run = Callable[["EvalOptions", bool, bool], int]


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("eval", cls=EvalCommand, help=HELP)(_options_come_later)


def _options_come_later() -> None:
    """Run eval cases (the callback ``EvalCommand`` replaces)."""


class EvalCommand(TyperCommand):
    """``agent eval``: its parameters and callback are those of ``eval_app()``'s, taken
    over the first time the command is parsed, invoked or asked for its help; listing it
    (``agent --help``: its name and help) imports nothing of the eval layer."""

    _generated = False

    def _generate(self) -> None:
        if not self._generated:
            command = typer.main.get_command(eval_app())
            self.params, self.callback = command.params, command.callback
            self._generated = True

    def get_params(self, ctx: Context) -> list[Parameter]:
        """The options generated from ``EvalOptions`` (click reads them all through here)."""
        self._generate()
        return super().get_params(ctx)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """Parse, a flag whose value may be left out (``--replay``) given the value it
        stands for first (click takes an option's value from the next word otherwise)."""
        from agentcli.eval.run.options import bare_flags, with_bare_values

        return super().parse_args(ctx, with_bare_values(args, bare_flags()))

    def invoke(self, ctx: Context) -> Any:
        """Run the generated callback."""
        self._generate()
        return super().invoke(ctx)


def eval_app(options: type[EvalOptions] | None = None, run: Run | None = None) -> typer.Typer:
    """An app of one command, ``eval``, with an option for every field of ``options``
    (``EvalOptions``) that has flags; it hands the parsed options to ``run`` (the session,
    by default)."""
    from agentcli.eval.run.options import EvalOptions, flag_fields

    options_type = options or EvalOptions
    run_options = run or _run_session

    def eval_command(ctx: typer.Context, **values: Any) -> None:
        from agentcli.eval.run.project_defaults import with_project
        from agentcli.project import load_project

        raw_input = _one_input(values.pop("input_arg"), values.pop("input_opt"))
        name, assistant = values.pop("name"), values.pop("assistant")
        if raw_input is None and assistant is not None and assistant.startswith("@"):
            # `agent eval @cases.jsonl`: a case file alone is the input, as -i would be (its
            # package, or the project's assistant, runs it)
            raw_input, assistant = assistant, None
        json_events, verbose = values.pop("json_events"), values.pop("verbose")
        given = frozenset(key for key in values if _on_command_line(ctx, key))
        parsed = options_type.from_flags(
            values, assistant=name or assistant, input=raw_input, command_line=given
        )
        parsed = with_project(parsed, load_project(parsed.cwd))
        raise typer.Exit(run_options(parsed, json_events, verbose))

    command = guarded(eval_command)
    # typer reads the command's options from its signature; a function takes the attribute
    # (inspect honours it) but its declared type has no __signature__.
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        _parameters(flag_fields(options_type))
    )
    single = typer.Typer(
        add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False
    )
    single.command("eval", help=HELP)(command)
    return single


def _on_command_line(ctx: Context, name: str) -> bool:
    """Whether the option ``name`` was given on the command line (not left at its
    default), so the project config does not override it."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _parameters(flags: Iterable[FlagField]) -> list[inspect.Parameter]:
    """The command's parameters: its arguments and -i/-n, one option per ``EvalOptions``
    field with flags, then the options of the view (--json, -v)."""
    arguments = [
        (
            "assistant",
            typer.Argument(None, help="Assistant id or path (found from -i when omitted)."),
        ),
        ("input_arg", typer.Argument(None, metavar="[INPUT]", help="A message, or @cases.jsonl.")),
        (
            "input_opt",
            typer.Option(None, "-i", "--input", help="Case file, message, agents:..., scripts:..."),
        ),
        ("name", typer.Option(None, "-n", "--name", help="Assistant id (with -i).")),
    ]
    view = [
        ("json_events", typer.Option(False, "--json", help="NDJSON events on stdout.")),
        (
            "verbose",
            typer.Option(False, "-v", "--verbose", help="Show outputs, assertions, tool calls."),
        ),
    ]
    fixed = [(name, str | None, default) for name, default in arguments]
    generated = [
        (
            flag.name,
            flag.type,
            typer.Option(
                flag.default,
                *flag.spec.flags,
                help=flag.spec.help,
                min=flag.spec.min,
                max=flag.spec.max,
            ),
        )
        for flag in flags
    ]
    shown = [(name, bool, default) for name, default in view]
    context = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    return [
        context,
        *(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind
            )
            for name, kind, default in [*fixed, *generated, *shown]
        ),
    ]


def _one_input(positional: str | None, option: str | None) -> str | None:
    """The input, given positionally or with -i (not both)."""
    if option is None:
        return positional
    if positional is not None:
        raise typer.BadParameter("give the input once: positionally or with -i", param_hint="INPUT")
    return option


def _run_session(options: EvalOptions, json_events: bool, verbose: bool) -> int:
    """Run the invocation: its input, else the project's suites; under ``--watch`` again
    on every change."""
    from agentcli.cli.suite_runs import run_targets, targets_of

    targets = targets_of(options)
    if options.watch:
        from agentcli.cli.watch import watch_runs

        return watch_runs(options, targets, _run_one, json_events, verbose)
    return run_targets(options, targets, _run_one, json_events, verbose)


def _run_one(options: EvalOptions, json_events: bool, verbose: bool) -> int:
    """Run one input through the console view, or the NDJSON events with --json."""
    import asyncio

    from agentcli.capture import routed_output
    from agentcli.eval.run.session import run_eval

    try:
        if options.output is not None and str(options.output) == "-":
            return _run_to_stdout(options, json_events, verbose)
        if json_events:
            from agentcli.cli.stdout import private_stdout
            from agentcli.cli.views.json_events import JsonEvents

            with private_stdout() as events, routed_output(stdout=sys.stderr):
                return asyncio.run(run_eval(options, JsonEvents(events)))
        from agentcli.cli.views.console import ConsoleView

        view = ConsoleView(verbose=verbose)  # before routing: it writes to the real stdout
        with routed_output():
            return asyncio.run(run_eval(options, view))
    finally:  # the collector off for the start-up is on again, whether a run started or not
        collector.resume()


def _run_to_stdout(options: EvalOptions, json_events: bool, verbose: bool) -> int:
    """``-o -``: the results as JSON Lines on stdout, alone (whatever else writes to it goes
    to stderr), and the console on stderr."""
    import asyncio

    from rich.console import Console

    from agentcli.capture import routed_output
    from agentcli.cli.stdout import private_stdout
    from agentcli.cli.views.console import ConsoleView
    from agentcli.errors import ConfigError
    from agentcli.eval.reports import results_to
    from agentcli.eval.run.session import run_eval

    if json_events:
        raise ConfigError(
            "--json and -o - both write to stdout", hint="give -o a file, or leave --json out"
        )
    view = ConsoleView(Console(file=sys.stderr, highlight=False, soft_wrap=True), verbose=verbose)
    with private_stdout() as results, results_to(results), routed_output(stdout=sys.stderr):
        return asyncio.run(run_eval(options, view))
