"""A ``--ctx`` file is checked against ``context.schema.json`` by ``agent run`` and ``agent
eval`` alike, run as real processes: an unknown field or a wrong type is exit 2 with the
file's line, the field, what it must be and a did-you-mean, before anything runs (the run
would otherwise go on as someone else, or with no chat id, without a word)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.harness import agent

# A Yao --ctx file, as Yao's agent testing docs show it.
YAO_CTX = {
    "chat_id": "test-chat-001",
    "authorized": {
        "user_id": "test-user-123",
        "team_id": "test-team-456",
        "constraints": {"owner_only": True, "extra": {"department": "engineering"}},
    },
    "metadata": {"mode": "test"},
}
ROOT_FIELDS = "chat_id, locale, user_id, team_id, metadata, authorized, client, referer"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An echo assistant ``parrot`` and a one-case file."""
    package = tmp_path / "assistants" / "parrot"
    package.mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Parrot", "connector": "echo"}\n')
    (tmp_path / "cases.jsonl").write_text('{"id": "x", "input": "hello there"}\n')
    return tmp_path


COMMANDS = {
    "eval": ["eval", "parrot", "@cases.jsonl", "-o", "p.jsonl", "--ctx", "ctx.json"],
    "run": ["run", "parrot", "hi", "--ctx", "ctx.json"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_unknown_fields_and_wrong_types_are_refused_at_their_lines(project, command):
    (project / "ctx.json").write_text('{"bogus":1,"chat_id":5,"locale":[]}')
    result = agent(project, *COMMANDS[command])
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: ctx.json:1: unknown field 'bogus'\n"
        "ctx.json:1: field 'chat_id' must be a string, got a number\n"
        "ctx.json:1: field 'locale' must be a string, got an array\n"
        f"  hint: the fields of ctx.json: {ROOT_FIELDS}\n"
    )
    assert not (project / "p.jsonl").exists()  # refused before anything ran


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_wrong_type_inside_authorized_is_refused(project, command):
    (project / "ctx.json").write_text('{"authorized":{"user_id":5}}')
    result = agent(project, *COMMANDS[command])
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: ctx.json:1: field 'authorized.user_id' must be a string, got a number\n"
        '  hint: the fields of a --ctx file: docs/eval.md, "The --ctx file"\n'
    )


def test_near_misses_get_a_did_you_mean_and_problems_come_in_file_order(project):
    (project / "ctx.json").write_text(
        "{\n"
        '  "authorized": {\n'
        '    "team_id": "t1",\n'
        '    "usr_id": "u1",\n'
        '    "constraints": {"owner_only": "yes"}\n'
        "  },\n"
        '  "metdata": {}\n'
        "}\n"
    )
    result = agent(project, *COMMANDS["eval"])
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: ctx.json:4: unknown field 'authorized.usr_id' (did you mean 'user_id'?)\n"
        "ctx.json:5: field 'authorized.constraints.owner_only' must be true or false, "
        "got a string\n"
        "ctx.json:7: unknown field 'metdata' (did you mean 'metadata'?)\n"
        "  hint: the fields of authorized: user_id, team_id, tenant_id, sub, client_id, scope, "
        "session_id, remember_me, constraints\n"
    )


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_yao_ctx_file_is_accepted(project, command):
    (project / "ctx.json").write_text(json.dumps(YAO_CTX, indent=2))
    result = agent(project, *COMMANDS[command])
    assert result.returncode == 0, result.stderr


def test_yao_client_and_referer_and_nulls_are_accepted(project):
    ctx = {
        **YAO_CTX,
        "locale": None,
        "client": {"type": "test", "user_agent": "yao-agent-test/1.0", "ip": "127.0.0.1"},
        "referer": "test",
        "authorized": {"user_id": "u", "tenant_id": "t", "scope": "all", "remember_me": False},
    }
    (project / "ctx.json").write_text(json.dumps(ctx))
    result = agent(project, *COMMANDS["run"])
    assert (result.returncode, result.stdout) == (0, "hi\n"), result.stderr
