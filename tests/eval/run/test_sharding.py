"""--shard i/N: parsing, a stable hash, and shards that partition any set of ids."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcli.errors import ConfigError
from agentcli.eval.run.sharding import (
    CI_SHARD_VARIABLES,
    in_shard,
    parse_shard,
    resolve_shard,
    select_shard,
    shard_of,
)


@pytest.mark.parametrize(
    ("text", "want"), [("1/1", (1, 1)), ("1/2", (1, 2)), ("2/2", (2, 2)), (" 3 / 10 ", (3, 10))]
)
def test_parse_shard(text: str, want: tuple[int, int]) -> None:
    assert parse_shard(text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3/2", "between 1 and 2"),
        ("0/2", "between 1 and 2"),
        ("a/b", "expected i/N"),
        ("1/0", "at least 1"),
        ("-1/2", "expected i/N"),
        ("1.5/2", "expected i/N"),
        ("2", "expected i/N"),
        ("", "expected i/N"),
        ("1/2/3", "expected i/N"),
    ],
)
def test_parse_shard_errors_are_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_shard(text)
    assert repr(text) in str(info.value)
    assert info.value.hint == (
        "shards are numbered 1/2 .. 2/2"
        if message == "between 1 and 2"
        else "e.g. --shard 1/4 runs the first of four shards"
    )


def test_the_hash_is_stable_across_processes_and_hash_seeds() -> None:
    ids = [f"case-{i}" for i in range(40)] + ["報告-✓", ""]
    here = [shard_of(i, 7) for i in ids]
    code = (
        "import sys, json; from agentcli.eval.run.sharding import shard_of; "
        "print(json.dumps([shard_of(i, 7) for i in json.loads(sys.argv[1])]))"
    )
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(ids)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert json.loads(out) == here


def test_known_assignments_do_not_drift() -> None:
    # Pinned: changing the hash would silently reshuffle every user's CI matrix.
    assert [shard_of(f"case-{i}", 4) for i in range(8)] == [4, 3, 4, 4, 4, 1, 2, 3]
    digest = hashlib.sha256(b"greet").digest()
    assert shard_of("greet", 5) == int.from_bytes(digest[:8], "big") % 5 + 1 == 1


def test_one_shard_holds_everything_and_shards_are_balanced() -> None:
    ids = [f"case-{i:04d}" for i in range(2000)]
    assert all(in_shard(i, 1, 1) for i in ids)
    sizes = [sum(in_shard(i, s, 4) for i in ids) for s in range(1, 5)]
    assert sum(sizes) == 2000
    assert all(400 <= size <= 600 for size in sizes), sizes


@dataclass(slots=True)
class _Case:
    id: str


def test_select_shard_keeps_order_and_reads_objects_or_dicts() -> None:
    cases = [_Case(f"c{i}") for i in range(30)]
    picked = select_shard(cases, 2, 3)
    assert picked == [c for c in cases if shard_of(c.id, 3) == 2]
    dicts = [{"id": c.id} for c in cases]
    assert [d["id"] for d in select_shard(dicts, 2, 3)] == [c.id for c in picked]
    keyed = select_shard([c.id for c in cases], 2, 3, key=lambda text: text)
    assert keyed == [c.id for c in picked]


@given(st.sets(st.text(max_size=12), max_size=60), st.integers(1, 10))
def test_shards_are_disjoint_and_complete(ids: set[str], count: int) -> None:
    ordered = sorted(ids)
    shards = [select_shard(ordered, i, count, key=str) for i in range(1, count + 1)]
    seen: set[str] = set()
    for shard in shards:
        assert seen.isdisjoint(shard)
        seen.update(shard)
        assert shard == [i for i in ordered if i in shard]  # order kept
    assert seen == ids
    for case_id in ordered:
        assert sum(in_shard(case_id, i, count) for i in range(1, count + 1)) == 1


def test_shard_of_rejects_zero_shards() -> None:
    with pytest.raises(ValueError):
        shard_of("x", 0)


_NO_CI = {
    name: ""
    for _, index_var, count_vars, _ in CI_SHARD_VARIABLES
    for name in (index_var, *count_vars)
}


@pytest.mark.parametrize(
    ("env", "want", "system"),
    [
        ({"JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "3"}, (1, 3), "Kubernetes Indexed Job"),
        (
            {"JOB_COMPLETION_INDEX": "2", "AGENTCLI_SHARD_COUNT": "3"},
            (3, 3),
            "Kubernetes Indexed Job",
        ),
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"}, (2, 4), "GitLab CI"),
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, (1, 2), "Buildkite"),
        ({"CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "4"}, (4, 4), "CircleCI"),
        ({"AGENTCLI_SHARD_INDEX": "1", "AGENTCLI_SHARD_COUNT": "2"}, (1, 2), "agentcli"),
    ],
)
def test_shard_auto_reads_each_ci_system(env: dict[str, str], want: tuple[int, int], system: str):
    shard = resolve_shard("auto", {**_NO_CI, **env})
    assert (shard.index, shard.count) == want
    assert shard.source is not None and shard.source.startswith(system + ":")
    for name, value in env.items():
        assert f"{name}={value}" in shard.describe()  # says which variables it used


def test_shard_auto_errors_name_what_is_missing_or_wrong() -> None:
    with pytest.raises(ConfigError, match="no CI shard variables") as info:
        resolve_shard("auto", _NO_CI)
    assert info.value.hint is not None and "CI_NODE_INDEX (GitLab CI)" in info.value.hint
    with pytest.raises(ConfigError, match=r"CI_NODE_INDEX is set .* but not CI_NODE_TOTAL"):
        resolve_shard("auto", {**_NO_CI, "CI_NODE_INDEX": "1"})
    with pytest.raises(ConfigError, match="must be whole numbers"):
        resolve_shard("auto", {**_NO_CI, "CI_NODE_INDEX": "x", "CI_NODE_TOTAL": "2"})
    with pytest.raises(ConfigError, match="between 1 and 2"):  # GitLab counts from 1
        resolve_shard("auto", {**_NO_CI, "CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "2"})
    assert resolve_shard(" 2/3 ", _NO_CI).source is None  # explicit shards need no CI


def test_shard_auto_from_the_cli_says_which_variables_it_used(tmp_path, monkeypatch) -> None:
    import shutil
    from pathlib import Path

    from typer.testing import CliRunner

    from agentcli.cli.main import _register, app

    _register()
    root = Path(__file__).resolve().parents[3]
    shutil.copytree(root / "fixtures/assistants/probe", tmp_path / "assistants/probe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))
    for name in _NO_CI:
        monkeypatch.delenv(name, raising=False)
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": f"k{i}", "input": "hi"}) + "\n" for i in range(12)))
    seen: list[set[str]] = []
    for index in ("1", "2"):
        monkeypatch.setenv("CI_NODE_INDEX", index)
        monkeypatch.setenv("CI_NODE_TOTAL", "2")
        out = tmp_path / f"part{index}.jsonl"
        result = CliRunner().invoke(
            app, ["eval", "probe", f"@{cases}", "--shard", "auto", "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        assert f"Shard: {index}/2 (from GitLab CI: CI_NODE_INDEX={index}, CI_NODE_TOTAL=2)" in (
            result.output
        )
        seen.append({r["id"] for r in map(json.loads, out.read_text().splitlines()) if "id" in r})
    assert seen[0].isdisjoint(seen[1]) and len(seen[0] | seen[1]) == 12
    monkeypatch.delenv("CI_NODE_INDEX")
    refused = CliRunner().invoke(app, ["eval", "probe", f"@{cases}", "--shard", "auto"])
    assert refused.exit_code == 2 and "no CI shard variables are set" in refused.output
