"""The options of ``agent eval``: one ``EvalOptions`` field each, whose ``OptionSpec`` says
how it meets the outside world — its flags and help (the CLI is generated from them), how
its text is parsed, whether a case file may give it per case, its key in the results header,
and whether one message (message mode) may take it. Adding an option is a field here plus
the code that acts on it.

Kept light on purpose: ``agent eval --help`` imports this module and nothing else of eval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, NamedTuple, get_type_hints

from agentcli.faults import FaultPlan, parse_faults
from agentcli.project.config import ProjectConfig

__all__ = [
    "DEFAULT_TIMEOUT",
    "EvalOptions",
    "ExecutorKind",
    "GateMode",
    "FlagField",
    "OptionSpec",
    "PerCase",
    "bare_flags",
    "flag_fields",
    "given_flags",
    "header_options",
    "spec_of",
    "with_bare_values",
]

DEFAULT_TIMEOUT = 300.0  # seconds per case: the "5m" of --timeout
GateMode = Literal["regressions"]  # --gate: what alone makes the exit code 1
ExecutorKind = Literal["local", "ray"]  # --executor: where the cases run

SPEC_KEY = "agentcli.option"


@dataclass(frozen=True, slots=True)
class PerCase:
    """A case-file key that gives the option for one case, and who wins when both do:
    ``case`` (the case's value over the flag's) or ``flag`` (the case's fills in)."""

    key: str
    wins: Literal["case", "flag"]


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """How one ``EvalOptions`` field meets the command line, the case files, the results
    header and message mode."""

    flags: tuple[str, ...] = ()  # none: the CLI sets it from its arguments (or no one does)
    help: str = ""
    parse: Callable[[str], Any] | None = None  # the flag's text to the value; ConfigError if bad
    text_default: str | None = None  # with ``parse``: the default as the user would type it
    min: float | None = None
    max: float | None = None
    per_case: PerCase | None = None
    header: str | None = None  # its key in the header's metadata.options; None: not recorded
    message: bool = True  # False: a run of cases option, refused with one message
    # A flag whose value may be left out (``--replay`` or ``--replay live-tools``): the
    # values it takes, and the one it means alone.
    choices: tuple[str, ...] = ()
    bare: str | None = None
    # Recorded in the header only when given (headers of runs without it stay as they were).
    header_when_set: bool = False
    # The flag may be given more than once; given so, its values go to this field (a list)
    # and the option itself stays unset (``-c a -c b``: a connector matrix).
    repeated_into: str | None = None
    # The flag may be given more than once, each time adding to the field (a list); a value
    # may also list several, joined by commas (``--tag smoke,fast``).
    multiple: bool = False

    @property
    def label(self) -> str:
        """How messages name it: the short flags and the last long one (``-o/--output``,
        ``--before-all``)."""
        short = [flag for flag in self.flags if not flag.startswith("--")]
        long = [flag for flag in self.flags if flag.startswith("--")]
        return "/".join(short + long[-1:])


def flag(*flags: str, help: str = "", **spec: Any) -> dict[str, OptionSpec]:
    """The ``metadata`` of an ``EvalOptions`` field: its ``OptionSpec`` (a flag with
    ``choices`` parses to one of them)."""
    if spec.get("choices") and "parse" not in spec:
        label, choices = flags[-1], spec["choices"]
        spec["parse"] = lambda text: _choice(text, label, choices)
    return {SPEC_KEY: OptionSpec(flags=flags, help=help, **spec)}


def _choice(text: str, label: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``, else a ConfigError naming them."""
    if text in choices:
        return text
    from agentcli.errors import ConfigError

    raise ConfigError(f"{label} {text!r}: use one of {', '.join(choices)}")


def bare_flags(options: type[EvalOptions] | None = None) -> dict[str, tuple[tuple[str, ...], str]]:
    """The flags whose value may be left out: flag -> (its values, the one it means alone)."""
    found = {}
    for item in fields(options or EvalOptions):
        spec = spec_of(item)
        if spec.bare is not None:
            for name in spec.flags:
                found[name] = (spec.choices, spec.bare)
    return found


def with_bare_values(args: list[str], bare: dict[str, tuple[tuple[str, ...], str]]) -> list[str]:
    """``args`` with the value a bare flag stands for put in after it, when what follows is
    not one of its values (``--replay @cases.jsonl`` -> ``--replay strict @cases.jsonl``)."""
    out: list[str] = []
    for index, arg in enumerate(args):
        out.append(arg)
        if arg == "--":
            out.extend(args[index + 1 :])
            break
        if arg in bare:
            choices, meaning = bare[arg]
            following = args[index + 1] if index + 1 < len(args) else None
            if following not in choices:
                out.append(meaning)
    return out


def _runs(text: str) -> int | Literal["auto"]:
    """``--runs`` text: a whole number of runs (1 or more), or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        runs = int(text)
    except ValueError:
        runs = 0
    if runs < 1:
        from agentcli.errors import ConfigError

        raise ConfigError(
            f"--runs {text!r}: give a whole number of runs (1 or more), or auto",
            hint="--runs auto repeats each case until its pass rate is decided (--max-runs)",
        )
    return runs


def _tag(text: str, label: str) -> str:
    """One tag of ``--tag`` / ``--exclude-tag``: one word, as in the case files."""
    tag = text.strip()
    if not tag or any(char.isspace() for char in tag):
        from agentcli.errors import ConfigError

        raise ConfigError(f"{label} {text!r}: a tag is one word (no spaces or commas)")
    return tag


def _duration(text: str) -> float:
    """``--timeout`` text (``30s``, ``2m``, ``1h``, a number of seconds) in seconds."""
    from agentcli.durations import parse_duration  # at parse time: --help needs none

    return parse_duration(text)


@dataclass(slots=True)
class EvalOptions:
    """What ``agent eval`` was asked, parsed and checked; fields in ``--help`` order."""

    assistant: str | None = None  # the CLI's ASSISTANT argument, or -n
    input: str | None = None  # the CLI's INPUT argument, or -i
    cwd: Path = field(default_factory=Path.cwd)
    connector: str | None = field(
        default=None,
        metadata=flag(
            "-c",
            "--connector",
            help="Override the connector; given several times, run every case on each (a matrix).",
            per_case=PerCase("options.connector", wins="flag"),
            header="connector",
            repeated_into="connectors",
        ),
    )
    # The columns of a connector matrix (-c given several times, or --matrix): every case
    # runs once on each. Empty outside a matrix.
    connectors: list[str] = field(
        default_factory=list, metadata=flag(header="connectors", header_when_set=True)
    )
    matrix: str | None = field(
        default=None,
        metadata=flag(
            "--matrix",
            help="Run every case on each of these connectors: a file listing them (matrix.yml)"
            " or names joined by commas (gpt-4o,local,scripted).",
            message=False,
        ),
    )
    matrix_pass: str = field(
        default="all",
        metadata=flag(
            "--matrix-pass",
            help="In a matrix: all (a case passes when it passes on every connector) or any"
            " (on one).",
            message=False,
            choices=("all", "any"),
            text_default="all",
            header="matrix_pass",
            header_when_set=True,
        ),
    )
    connector_all: bool = field(
        default=False,
        metadata=flag(
            "--connector-all",
            help="Apply -c to delegated and ctx.agent assistants too.",
        ),
    )
    user: str | None = field(
        default=None,
        metadata=flag("-u", "--user", help="User id.", per_case=PerCase("user", wins="flag")),
    )
    team: str | None = field(
        default=None,
        metadata=flag("-t", "--team", help="Team id.", per_case=PerCase("team", wins="flag")),
    )
    locale: str | None = field(default=None, metadata=flag("--locale", help="Locale, e.g. zh-cn."))
    ctx_file: Path | None = field(
        default=None,
        metadata=flag("--ctx", help="Context JSON (chat_id, authorized, metadata, locale)."),
    )
    timeout: float = field(
        default=DEFAULT_TIMEOUT,
        metadata=flag(
            "--timeout",
            help="Per-case timeout: 30s, 2m, 1h.",
            parse=_duration,
            text_default="5m",
            per_case=PerCase("timeout", wins="case"),
            header="timeout_s",
        ),
    )
    max_steps: int | None = field(
        default=None,
        metadata=flag(
            "--max-steps",
            help="Model calls a turn may make (default: package.yao's max_steps, else 20).",
            min=1,
            per_case=PerCase("options.max_steps", wins="flag"),
            header="max_steps",
            header_when_set=True,
        ),
    )
    parallel: int = field(
        default=1,
        metadata=flag(
            "--parallel", help="Cases run at once.", min=1, header="parallel", message=False
        ),
    )
    runs: int | Literal["auto"] = field(
        default=1,
        metadata=flag(
            "--runs",
            help="Runs per case (stability); auto: repeat each case until its pass rate is"
            " decided against --min-pass-rate (at most --max-runs).",
            parse=_runs,
            text_default="1",
            header="runs",
            message=False,
        ),
    )
    max_runs: int = field(
        default=10,
        metadata=flag(
            "--max-runs",
            help="With --runs auto: the most runs a case gets.",
            min=1,
            header="max_runs",
            header_when_set=True,
            message=False,
        ),
    )
    run_filter: str | None = field(
        default=None, metadata=flag("--run", help="Regex on case ids.", header="run", message=False)
    )
    tags: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--tag",
            help="Run only the cases with this tag (repeatable: any of them); names a tag the"
            " project excludes by default to run it.",
            parse=lambda text: _tag(text, "--tag"),
            multiple=True,
            header="tags",
            header_when_set=True,
            message=False,
        ),
    )
    exclude_tags: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--exclude-tag",
            help="Leave out the cases with this tag (repeatable).",
            parse=lambda text: _tag(text, "--exclude-tag"),
            multiple=True,
            header="exclude_tags",
            header_when_set=True,
            message=False,
        ),
    )
    # The project's exclude_tags (agentcli.yml): left out unless --tag names them.
    default_excluded: list[str] = field(
        default_factory=list, metadata=flag(header="default_excluded", header_when_set=True)
    )
    suites: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--suite",
            help="Run a suite of the project config (agentcli.yml suites:), repeatable;"
            " without an input, every suite runs.",
            multiple=True,
            header="suites",
            header_when_set=True,
            message=False,
        ),
    )
    watch: bool = field(
        default=False,
        metadata=flag(
            "--watch",
            help="Run, then run again the affected suites whenever a case file, the assistant"
            " package or the project config changes (Ctrl-C stops).",
        ),
    )
    fail_fast: bool = field(
        default=False,
        metadata=flag(
            "--fail-fast", help="Stop at the first failure.", header="fail_fast", message=False
        ),
    )
    dry_run: bool = field(
        default=False,
        metadata=flag("--dry-run", help="List the cases without running them.", message=False),
    )
    otel: bool = field(
        default=False,
        metadata=flag(
            "--otel",
            help="Export OpenTelemetry spans (run, case, turn, model and tool calls) over "
            "OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (on by itself when that is set).",
        ),
    )
    estimate: bool = field(
        default=False,
        metadata=flag(
            "--estimate",
            help="Print the planned model calls, tokens and cost (the method named) without "
            "running anything.",
            message=False,
        ),
    )
    record: str | None = field(
        default=None,
        metadata=flag(
            "--record",
            help="Record each case's model and tool calls into a cassette (cassettes/<id>.jsonl);"
            " --record missing replays what is recorded and records the rest.",
            message=False,
            choices=("all", "missing"),
            bare="all",
            header="record",
            header_when_set=True,
        ),
    )
    replay: str | None = field(
        default=None,
        metadata=flag(
            "--replay",
            help="Answer every model and tool call from the cases' cassettes (no network, no key);"
            " --replay live-tools runs the tools, --replay live-model calls the model.",
            message=False,
            choices=("strict", "live-tools", "live-model"),
            bare="strict",
            header="replay",
            header_when_set=True,
        ),
    )
    seed: int | None = field(
        default=None,
        metadata=flag(
            "--seed",
            help="Fix agentcli's random choices (ids, per case) and pass seed to the providers"
            " that take one.",
            header="seed",
            header_when_set=True,
        ),
    )
    faults: FaultPlan | None = field(
        default=None,
        metadata=flag(
            "--faults",
            help="Make a seeded fraction of the tool calls fail:"
            " 'rate=0.2,kinds=timeout|error|malformed,seed=42' (a case's tools.faults wins).",
            parse=parse_faults,
            per_case=PerCase("tools.faults", wins="case"),
            header="faults",
            header_when_set=True,
        ),
    )
    cache: bool = field(
        default=False,
        metadata=flag(
            "--cache",
            help="Answer a model call asked again with the same request from a cache on disk"
            " (agent cache stats/clear); under --runs never the agent under test's, so"
            " repeats stay independent.",
            header="cache",
            header_when_set=True,
        ),
    )
    cassettes: Path | None = field(
        default=None,
        metadata=flag(
            "--cassettes",
            help="Cassette folder (default: cassettes/ beside the case file).",
            message=False,
            header="cassettes",
            header_when_set=True,
        ),
    )
    simulator: str | None = field(
        default=None,
        metadata=flag(
            "--simulator",
            help="Default simulator for dynamic cases.",
            per_case=PerCase("simulator.use", wins="case"),
            message=False,
        ),
    )
    judge_connector: str | None = field(
        default=None,
        metadata=flag(
            "--judge-connector",
            help="Connector of the LLM judges of agent assertions that name none"
            " (options.connector).",
            message=False,
            header="judge_connector",
            header_when_set=True,
        ),
    )
    before_all: str | None = field(
        default=None,
        metadata=flag(
            "--before", "--before-all", help="BeforeAll hook: file.Func in src/.", message=False
        ),
    )
    after_all: str | None = field(
        default=None,
        metadata=flag(
            "--after", "--after-all", help="AfterAll hook: file.Func in src/.", message=False
        ),
    )
    output: Path | None = field(
        default=None,
        metadata=flag(
            "-o", "--output", help="Results file: .jsonl .json .md .html .xml", message=False
        ),
    )
    scripts: str | None = field(
        default=None,
        metadata=flag("-s", "--scripts", help="Run Test* functions of src/<MODULE>_test.py."),
    )
    root: Path | None = field(default=None, metadata=flag("--root", help="Assistants root folder."))
    # The connectors file of the project config (agentcli.yml connectors:, AGENT_CONNECTORS).
    connectors_file: Path | None = None
    # The options given on the command line (field names): the project config fills the others.
    command_line: frozenset[str] = frozenset()
    # The options the project config filled in (field names): never "given" by the user.
    from_project: frozenset[str] = frozenset()
    # The project's assistant: the target of cases that no package holds and no flag names.
    default_assistant: str | None = None
    # The project the run belongs to (None: none found): its results go to its runs folder.
    project: ProjectConfig | None = None
    state: str = field(
        default="fresh",
        metadata=flag(
            "--state",
            help="Memory store: fresh (empty, per run, removed after), persistent (the user's, "
            "as agent run), or a folder DIR (created if missing, kept across runs).",
            header="state",
        ),
    )
    keep_sandboxes: bool = field(
        default=False,
        metadata=flag(
            "--keep-sandboxes",
            help="Keep each case's sandbox folder (its path is in the result) for debugging.",
            header="keep_sandboxes",
            header_when_set=True,
        ),
    )
    min_pass_rate: float | None = field(
        default=None,
        metadata=flag(
            "--min-pass-rate",
            help="With --runs: a case passes at this rate (%; default 100, under --runs auto 80).",
            min=0,
            max=100,
            message=False,
        ),
    )
    shard: str | None = field(
        default=None,
        metadata=flag(
            "--shard",
            help="Run shard i of N (i/N), by a stable hash of ids; `auto` reads the CI "
            "system's shard variables (Kubernetes, GitLab, Buildkite, CircleCI).",
            message=False,
        ),
    )
    executor: ExecutorKind = field(
        default="local",
        metadata=flag(
            "--executor",
            help="Where the cases run: local (this process) or ray (tasks on a Ray cluster,"
            " --parallel at once; pip install 'agentcli[ray]').",
            choices=("local", "ray"),
            text_default="local",
            message=False,
            header="executor",
            header_when_set=True,
        ),
    )
    ray_address: str | None = field(
        default=None,
        metadata=flag(
            "--ray-address",
            help="With --executor ray: the cluster (host:port or ray://host:10001; default:"
            " RAY_ADDRESS, else the cluster started on this machine, else a new local one).",
            message=False,
            header="ray_address",
            header_when_set=True,
        ),
    )
    ray_cpus: float = field(
        default=1.0,
        metadata=flag(
            "--ray-cpus",
            help="With --executor ray: CPUs a case's task reserves (0.25: four cases at once"
            " per CPU, for cases that mostly wait on the model).",
            min=0.01,
            max=1024,
            message=False,
            header="ray_cpus",
            header_when_set=True,
        ),
    )
    retries: int = field(
        default=0,
        metadata=flag(
            "--retries",
            help="Re-run a case that ended in error up to N times.",
            min=0,
            message=False,
        ),
    )
    resume: Path | None = field(
        default=None,
        metadata=flag(
            "--resume",
            help="Continue a partial results file: keep its finished cases.",
            message=False,
        ),
    )
    rerun: Path | None = field(
        default=None,
        metadata=flag(
            "--rerun",
            help="Run again only the cases that failed, errored or timed out in this results"
            " file, keeping its other results, into a fresh results file.",
            message=False,
            header="rerun",
            header_when_set=True,
        ),
    )
    last_failed: bool = field(
        default=False,
        metadata=flag(
            "--last-failed",
            help="--rerun the newest results file beside the case file (output-*.jsonl).",
            message=False,
        ),
    )
    force: bool = field(
        default=False,
        metadata=flag(
            "--force",
            help="Let -o replace an existing file that is not a results file of its format.",
            message=False,
        ),
    )
    baseline: Path | None = field(
        default=None,
        metadata=flag(
            "--baseline",
            help="Compare with this results file as the run ends (as agent diff does).",
            message=False,
        ),
    )
    gate: GateMode | None = field(
        default=None,
        metadata=flag(
            "--gate",
            help="With --baseline: exit 1 only on regressions (cases that passed in it).",
            message=False,
        ),
    )
    max_cost: float | None = field(
        default=None,
        metadata=flag(
            "--max-cost",
            help="Stop starting cases once the spent cost (agent, judges and simulator; US$) "
            "would exceed USD: the rest are skipped and the run exits 1.",
            min=0,
            header="max_cost",
            header_when_set=True,
            message=False,
        ),
    )
    include_infra: bool = field(
        default=False,
        metadata=flag(
            "--include-infra",
            help="With --baseline: count failures on the infrastructure (provider, network,"
            " timeout) in the comparison too.",
            message=False,
        ),
    )
    alpha: float = field(
        default=0.05,
        metadata=flag(
            "--alpha",
            help="With --baseline and --runs: the significance level of a change.",
            min=0,
            max=1,
            message=False,
        ),
    )

    @property
    def adaptive(self) -> bool:
        """Whether ``--runs auto`` was asked."""
        return self.runs == "auto"

    @property
    def runs_per_case(self) -> int:
        """The runs each case may get: ``--runs N``, or ``--max-runs`` under ``--runs auto``."""
        return self.max_runs if self.runs == "auto" else self.runs

    @property
    def pass_bar(self) -> float:
        """``--min-pass-rate`` in percent: as given, else 80 under ``--runs auto`` (a bar of
        100 can be met only by running every case to ``--max-runs``), else 100."""
        if self.min_pass_rate is not None:
            return self.min_pass_rate
        return 80.0 if self.runs == "auto" else 100.0

    @classmethod
    def from_flags(cls, values: dict[str, Any], **given: Any) -> EvalOptions:
        """The options from the command line's ``values`` (by field name; each flag's text
        parsed, so a bad value is a ConfigError here) and what the CLI worked out from its
        arguments (``given``)."""
        parsed = dict(given)
        for item in fields(cls):
            spec = spec_of(item)
            if spec.flags and item.name in values:
                value = values[item.name]
                if spec.multiple:
                    words = [word for text in value or () for word in text.split(",")]
                    parsed[item.name] = [spec.parse(w) if spec.parse else w for w in words if w]
                    continue
                if spec.repeated_into is not None and isinstance(value, list | tuple):
                    if len(value) > 1:  # given several times: the values go elsewhere
                        parsed[spec.repeated_into] = list(value)
                        continue
                    value = value[0] if value else None
                parsed[item.name] = spec.parse(value) if spec.parse and value is not None else value
        return cls(**parsed)


def _header_value(value: Any) -> Any:
    """A value as the header's JSON holds it (a path or a fault plan as its text, a list as
    a copy)."""
    if isinstance(value, list):
        return list(value)
    return str(value) if isinstance(value, Path | FaultPlan) else value


def _default(item: Field[Any]) -> Any:
    """A field's default value (made by its factory, when it has one)."""
    if item.default is MISSING and item.default_factory is not MISSING:
        return item.default_factory()
    return item.default


def spec_of(item: Field[Any]) -> OptionSpec:
    """The ``OptionSpec`` of a field (a field without one has no flag and no header key)."""
    spec = item.metadata.get(SPEC_KEY)
    return spec if isinstance(spec, OptionSpec) else OptionSpec()


class FlagField(NamedTuple):
    """A field as the command line sees it: the type its flag parses into and its default
    (the text, when the field parses its own)."""

    name: str
    type: Any
    default: Any
    spec: OptionSpec


def flag_fields(options: type[EvalOptions] = EvalOptions) -> Iterator[FlagField]:
    """Every field of ``options`` that has a flag, in field order."""
    hints = get_type_hints(options)
    for item in fields(options):
        spec = spec_of(item)
        if not spec.flags:
            continue
        if spec.repeated_into is not None or spec.multiple:  # click collects a list
            yield FlagField(item.name, list[str] | None, None, spec)
        elif spec.parse is not None:
            yield FlagField(item.name, str, spec.text_default, spec)
        else:
            yield FlagField(item.name, hints[item.name], item.default, spec)


def given_flags(options: EvalOptions, which: Callable[[OptionSpec], bool]) -> list[str]:
    """The labels of the options ``which`` selects that were given (differ from their
    defaults, and not filled in by the project config), in field order."""
    defaults = type(options)()
    return [
        spec.label
        for item in fields(options)
        if which(spec := spec_of(item))
        and item.name not in options.from_project
        and getattr(options, item.name) != getattr(defaults, item.name)
    ]


# The results file's documented order of the header's options (docs/eval.md); options
# recorded later follow them in field order.
_HEADER_ORDER = ("connector", "timeout_s", "parallel", "runs", "fail_fast", "run")


def header_options(options: EvalOptions) -> dict[str, Any]:
    """``metadata.options`` of the results header: every field marked for it (those marked
    ``header_when_set`` only when given)."""
    recorded = {
        spec.header: _header_value(getattr(options, item.name))
        for item in fields(options)
        if (spec := spec_of(item)).header is not None
        and not (spec.header_when_set and getattr(options, item.name) == _default(item))
    }
    first = [key for key in _HEADER_ORDER if key in recorded]
    return {key: recorded[key] for key in [*first, *(k for k in recorded if k not in first)]}
