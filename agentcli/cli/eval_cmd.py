"""``agent eval``: run eval cases (or one message) against an assistant."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentcli.cli.errors import guarded

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

Exit codes: 0 all passed, 1 a case failed/errored/timed out (or results could not be
written mid-run), 2 bad input, 130 interrupted.
"""


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("eval", help=HELP, no_args_is_help=True)(guarded(eval_command))


def eval_command(
    assistant: str | None = typer.Argument(
        None, help="Assistant id or path (found from -i when omitted)."
    ),
    input_arg: str | None = typer.Argument(
        None, metavar="[INPUT]", help="A message, or @cases.jsonl."
    ),
    input_opt: str | None = typer.Option(
        None, "-i", "--input", help="Case file, message, agents:..., scripts:..."
    ),
    name: str | None = typer.Option(None, "-n", "--name", help="Assistant id (with -i)."),
    connector: str | None = typer.Option(None, "-c", "--connector", help="Override the connector."),
    user: str | None = typer.Option(None, "-u", "--user", help="User id."),
    team: str | None = typer.Option(None, "-t", "--team", help="Team id."),
    locale: str | None = typer.Option(None, "--locale", help="Locale, e.g. zh-cn."),
    ctx: Path | None = typer.Option(
        None, "--ctx", help="Context JSON (chat_id, authorized, metadata, locale)."
    ),
    timeout: str = typer.Option("5m", "--timeout", help="Per-case timeout: 30s, 2m, 1h."),
    parallel: int = typer.Option(1, "--parallel", min=1, help="Cases run at once."),
    runs: int = typer.Option(1, "--runs", min=1, help="Runs per case (stability)."),
    run_filter: str | None = typer.Option(None, "--run", help="Regex on case ids."),
    fail_fast: bool = typer.Option(False, "--fail-fast", help="Stop at the first failure."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cases without running them."),
    simulator: str | None = typer.Option(
        None, "--simulator", help="Default simulator for dynamic cases."
    ),
    before_all: str | None = typer.Option(
        None, "--before", "--before-all", help="BeforeAll hook: file.Func in src/."
    ),
    after_all: str | None = typer.Option(
        None, "--after", "--after-all", help="AfterAll hook: file.Func in src/."
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Results file: .jsonl .json .md .html .xml"
    ),
    json_events: bool = typer.Option(False, "--json", help="NDJSON events on stdout."),
    verbose: bool = typer.Option(
        False, "-v", "--verbose", help="Show outputs, assertions, tool calls."
    ),
    scripts: str | None = typer.Option(
        None, "-s", "--scripts", help="Run Test* functions of src/<MODULE>_test.py."
    ),
    root: Path | None = typer.Option(None, "--root", help="Assistants root folder."),
    min_pass_rate: float = typer.Option(
        100.0,
        "--min-pass-rate",
        min=0,
        max=100,
        help="With --runs: a case passes at this rate (%).",
    ),
    shard: str | None = typer.Option(
        None, "--shard", help="Run shard i of N (i/N), by a stable hash of ids."
    ),
    retries: int = typer.Option(
        0, "--retries", min=0, help="Re-run a case that ended in error up to N times."
    ),
    resume: Path | None = typer.Option(
        None, "--resume", help="Continue a partial results file: keep its finished cases."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Let -o replace an existing file that is not a results file of its format.",
    ),
) -> None:
    """Run eval cases."""
    import asyncio

    from agentcli.durations import parse_duration
    from agentcli.eval.run.session import EvalRequest, run_eval

    if input_opt is not None:
        if input_arg is not None:
            raise typer.BadParameter(
                "give the input once: positionally or with -i", param_hint="INPUT"
            )
        raw_input = input_opt
    else:
        raw_input = input_arg
    target = name or assistant
    request = EvalRequest(
        assistant=target,
        input=raw_input,
        root=root,
        connector=connector,
        user=user,
        team=team,
        locale=locale,
        ctx_file=ctx,
        timeout=parse_duration(timeout),
        parallel=parallel,
        runs=runs,
        run_filter=run_filter,
        fail_fast=fail_fast,
        dry_run=dry_run,
        simulator=simulator,
        before_all=before_all,
        after_all=after_all,
        output=output,
        scripts=scripts,
        min_pass_rate=min_pass_rate,
        shard=shard,
        retries=retries,
        resume=resume,
        force=force,
    )
    from agentcli.capture import routed_output

    if json_events:
        from agentcli.cli.stdout import private_stdout
        from agentcli.cli.views.json_events import JsonEvents

        with private_stdout() as events, routed_output(stdout=sys.stderr):
            code = asyncio.run(run_eval(request, JsonEvents(events)))
    else:
        from agentcli.cli.views.console import ConsoleView

        view = ConsoleView(verbose=verbose)
        with routed_output():
            code = asyncio.run(run_eval(request, view))
    raise typer.Exit(code)
