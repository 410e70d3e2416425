"""EvalOptions: what each field's metadata says holds — the header it builds, the options one
message refuses, the text its flags parse, and the per-case precedence the runner applies."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from agentcli.errors import ConfigError
from agentcli.eval.cases.model import Case, Simulator
from agentcli.eval.run.dynamic import simulator_id
from agentcli.eval.run.options import (
    EvalOptions,
    OptionSpec,
    flag_fields,
    header_options,
    spec_of,
)
from agentcli.eval.run.request import refuse_case_options
from agentcli.faults import FaultPlan
from tests.eval.probe import Probe, cases

SCHEMA = Path(__file__).resolve().parents[3] / "agentcli" / "eval" / "cases" / "case.schema.json"

# A value other than the default for every field with flags, as the flag would give it.
GIVEN = {
    "connector": "echo",
    "matrix": "echo,scripted",
    "matrix_pass": "any",
    "connector_all": True,
    "user": "u1",
    "team": "t1",
    "locale": "zh-cn",
    "ctx_file": Path("ctx.json"),
    "timeout": 30.0,
    "max_steps": 60,
    "parallel": 4,
    "runs": 3,
    "max_runs": 5,
    "run_filter": "^a",
    "tags": ["smoke"],
    "exclude_tags": ["slow"],
    "suites": ["nightly"],
    "watch": True,
    "judge_connector": "gpt-4o-mini",
    "fail_fast": True,
    "dry_run": True,
    "record": "all",
    "replay": "strict",
    "cache": True,
    "seed": 7,
    "faults": FaultPlan(0.2, ("timeout", "error"), 42),
    "cassettes": Path("tapes"),
    "simulator": "sim.user",
    "before_all": "env.BeforeAll",
    "after_all": "env.AfterAll",
    "output": Path("out.jsonl"),
    "scripts": "env",
    "root": Path("assistants"),
    "state": "persistent",
    "keep_sandboxes": True,
    "min_pass_rate": 80.0,
    "shard": "1/2",
    "executor": "ray",
    "ray_address": "127.0.0.1:6379",
    "ray_cpus": 0.5,
    "retries": 2,
    "resume": Path("old.jsonl"),
    "rerun": Path("old.jsonl"),
    "last_failed": True,
    "force": True,
    "baseline": Path("main.jsonl"),
    "gate": "regressions",
    "alpha": 0.01,
    "max_cost": 2.5,
    "estimate": True,
    "otel": True,
    "include_infra": True,
}


def test_every_field_with_flags_has_a_value_here():
    assert {flag.name for flag in flag_fields()} == set(GIVEN)


def test_the_header_records_todays_options_in_the_documented_order():
    options = EvalOptions(connector="echo", timeout=30.0, parallel=4, runs=3, run_filter="^a")
    header = header_options(options)
    assert list(header.items()) == [
        ("connector", "echo"),
        ("timeout_s", 30.0),
        ("parallel", 4),
        ("runs", 3),
        ("fail_fast", False),
        ("run", "^a"),
        ("state", "fresh"),
    ]
    assert json.dumps(header_options(EvalOptions())) == (
        '{"connector": null, "timeout_s": 300.0, "parallel": 1, "runs": 1, '
        '"fail_fast": false, "run": null, "state": "fresh"}'
    )


def test_options_given_rarely_join_the_header_only_when_given():
    options = EvalOptions(max_steps=60, replay="live-tools", cassettes=Path("tapes"))
    header = header_options(options)
    assert list(header)[6:] == ["max_steps", "replay", "cassettes", "state"]
    assert (header["max_steps"], header["replay"], header["cassettes"]) == (
        60,
        "live-tools",
        "tapes",
    )
    assert "record" not in header


@pytest.mark.parametrize("name", sorted(GIVEN))
def test_one_message_refuses_exactly_the_options_marked_so(name):
    spec = next(flag.spec for flag in flag_fields() if flag.name == name)
    options = EvalOptions(**{name: GIVEN[name]})
    if spec.message:
        refuse_case_options(options)
        return
    with pytest.raises(ConfigError) as raised:
        refuse_case_options(options)
    assert raised.value.message == f"{spec.label} applies to a file of cases, not to one message"


def test_refused_options_are_named_together_in_field_order():
    options = EvalOptions(output=Path("o.jsonl"), runs=2, before_all="env.B", force=True)
    with pytest.raises(ConfigError, match=r"^--runs, --before-all, -o/--output, --force apply"):
        refuse_case_options(options)


def test_labels_name_the_short_flags_and_the_last_long_one():
    assert OptionSpec(flags=("-o", "--output")).label == "-o/--output"
    assert OptionSpec(flags=("--before", "--before-all")).label == "--before-all"
    assert OptionSpec(flags=("--parallel",)).label == "--parallel"


def test_a_parsed_flag_has_a_text_default_that_parses_to_the_default():
    parsed = [
        flag for flag in flag_fields() if flag.spec.parse is not None and not flag.spec.multiple
    ]
    assert [flag.name for flag in parsed] == [
        "matrix_pass",
        "timeout",
        "runs",
        "record",
        "replay",
        "faults",
        "executor",
    ]
    defaults = EvalOptions()
    for flag in parsed:
        assert flag.type is str
        if flag.default is None:  # an option given or not: no text to parse when it is not
            assert getattr(defaults, flag.name) is None
        else:
            assert flag.spec.parse(flag.default) == getattr(defaults, flag.name)


def test_a_flag_given_alone_means_its_bare_value():
    from agentcli.eval.run.options import bare_flags, with_bare_values

    bare = bare_flags()
    assert bare == {
        "--record": (("all", "missing"), "all"),
        "--replay": (("strict", "live-tools", "live-model"), "strict"),
    }
    assert with_bare_values(["--replay", "@c.jsonl"], bare) == ["--replay", "strict", "@c.jsonl"]
    assert with_bare_values(["x", "--replay"], bare) == ["x", "--replay", "strict"]
    assert with_bare_values(["--replay", "live-tools"], bare) == ["--replay", "live-tools"]
    assert with_bare_values(["--", "--replay"], bare) == ["--", "--replay"]
    with pytest.raises(ConfigError, match=r"--record 'sometimes': use one of all, missing"):
        EvalOptions.from_flags({"record": "sometimes"})


def test_flag_text_is_parsed_and_checked_where_it_is_read():
    options = EvalOptions.from_flags({"timeout": "1m30s", "parallel": 3}, input="@c.jsonl")
    assert (options.timeout, options.parallel, options.input) == (90.0, 3, "@c.jsonl")
    with pytest.raises(ConfigError, match=r'invalid duration "5 minutes": use seconds'):
        EvalOptions.from_flags({"timeout": "5 minutes"})


def test_fields_without_flags_are_not_on_the_command_line():
    unflagged = {item.name for item in fields(EvalOptions) if not spec_of(item).flags}
    # connectors: the values of -c given several times (or of --matrix), set by the CLI;
    # the others come from the project config (and command_line: which flags were given)
    assert unflagged == {
        "assistant",
        "input",
        "cwd",
        "connectors",
        "default_excluded",
        "connectors_file",
        "command_line",
        "from_project",
        "default_assistant",
        "project",
    }


def test_a_repeatable_flag_collects_every_value_and_splits_commas():
    options = EvalOptions.from_flags({"tags": ["smoke", "fast,db"], "exclude_tags": None})
    assert (options.tags, options.exclude_tags) == (["smoke", "fast", "db"], [])
    (tags,) = [flag for flag in flag_fields() if flag.name == "tags"]
    assert (tags.type, tags.default) == (list[str] | None, None)
    with pytest.raises(ConfigError, match=r"^--tag 'two words': a tag is one word"):
        EvalOptions.from_flags({"tags": ["two words"]})


def test_tags_join_the_header_only_when_given():
    assert "tags" not in header_options(EvalOptions())
    header = header_options(EvalOptions(tags=["smoke"], default_excluded=["slow"]))
    assert (header["tags"], header["default_excluded"]) == (["smoke"], ["slow"])


# --- per case: the case-file key exists, and the runner lets the side the metadata names win


def _schema_has(key: str) -> bool:
    schema = json.loads(SCHEMA.read_text())
    node = schema
    for part in key.split("."):
        if "$ref" in node:  # "#/$defs/<name>"
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        properties = node.get("properties", {})
        if part not in properties:
            return False
        node = properties[part]
    return True


async def _connector_winner() -> str:
    probe = Probe(connector="flag-connector")
    (case,) = cases({"id": "a", "input": "x", "options": {"connector": "case-connector"}})
    chosen = probe.runner.config.request_options(case, None).connector
    await probe.registry.aclose()
    return {"flag-connector": "flag", "case-connector": "case"}[chosen]


async def _identity_winner(field: str) -> str:
    probe = Probe(user_id="flag-user", team_id="flag-team")
    (case,) = cases({"id": "a", "input": "x", "user": "case-user", "team": "case-team"})
    options = probe.runner.config.request_options(case, None)
    await probe.registry.aclose()
    return getattr(options, f"{field}_id").split("-")[0]


async def _timeout_winner() -> str:
    probe = Probe(timeout=60)
    (result,) = await probe.run({"id": "slow", "input": "sleep 30", "timeout": "100ms"})
    return "case" if result.status == "timeout" else "flag"


async def _max_steps_winner() -> str:
    probe = Probe(max_steps=9)
    (case,) = cases({"id": "a", "input": "x", "options": {"max_steps": 7}})
    chosen = probe.runner.config.request_options(case, None).max_steps
    await probe.registry.aclose()
    return {9: "flag", 7: "case"}[chosen]


async def _simulator_winner() -> str:
    chosen = simulator_id(Case(id="a", simulator=Simulator(use="case.sim")), "flag.sim")
    return chosen.split(".")[0] if chosen else "neither"


async def _faults_winner() -> str:
    from agentcli.eval.run.tool_world import world_for

    (case,) = cases({"id": "a", "input": "x", "tools": {"faults": {"rate": 0.5, "seed": 2}}})
    world = world_for(case.tools, FaultPlan(0.9, seed=1), case.id, None)
    assert world is not None and world.faults is not None
    return {0.9: "flag", 0.5: "case"}[world.faults.rate]


WINNERS = {
    "faults": _faults_winner,
    "connector": _connector_winner,
    "user": lambda: _identity_winner("user"),
    "team": lambda: _identity_winner("team"),
    "timeout": _timeout_winner,
    "max_steps": _max_steps_winner,
    "simulator": _simulator_winner,
}


def test_every_option_a_case_may_give_is_checked_against_the_runner():
    assert {flag.name for flag in flag_fields() if flag.spec.per_case} == set(WINNERS)


@pytest.mark.parametrize("name", sorted(WINNERS))
async def test_per_case_metadata_matches_the_schema_and_the_runner(name, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    spec = next(flag.spec for flag in flag_fields() if flag.name == name)
    assert spec.per_case is not None
    assert _schema_has(spec.per_case.key), spec.per_case.key
    assert await WINNERS[name]() == spec.per_case.wins
