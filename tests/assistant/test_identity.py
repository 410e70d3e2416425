"""Identity and the --ctx file, shared by agent run and agent eval: one precedence (the first
source that gives a value) and one reader of the context file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.assistant.identity import (
    ContextFile,
    Identity,
    load_context_file,
    resolve_identity,
)
from agentcli.errors import ConfigError


def test_each_part_comes_from_the_first_source_that_gives_it():
    flags = Identity(locale=None, user_id="u-flag", team_id="")
    case = Identity(user_id="u-case", team_id="t-case")
    context = Identity(locale="fr", user_id="u-ctx", team_id="t-ctx")
    assert resolve_identity(flags, case, context) == ("fr", "u-flag", "t-case")
    assert resolve_identity(flags, context) == ("fr", "u-flag", "t-ctx")


def test_defaults_fill_what_no_source_gives():
    assert resolve_identity(Identity(), defaults=("en-us", "test-user", "test-team")) == (
        "en-us",
        "test-user",
        "test-team",
    )
    assert resolve_identity() == ("", "", "")


def test_a_context_file_gives_identity_chat_metadata_and_authorized(tmp_path: Path):
    path = tmp_path / "ctx.json"
    path.write_text(
        json.dumps(
            {
                "chat_id": "c1",
                "locale": "zh-cn",
                "authorized": {"user_id": "u1", "tenant_id": "t1", "scope": "all"},
                "metadata": {"mode": "test"},
            }
        )
    )
    context = load_context_file(path)
    assert context == ContextFile(
        locale="zh-cn",
        user_id="u1",
        team_id="t1",
        chat_id="c1",
        metadata={"mode": "test"},
        authorized={"user_id": "u1", "tenant_id": "t1", "scope": "all"},
    )
    assert context.identity == Identity("zh-cn", "u1", "t1")


def test_top_level_ids_stand_in_for_authorized_ones_and_absent_parts_say_nothing(tmp_path):
    path = tmp_path / "ctx.json"
    path.write_text('{"user_id": "u2", "team_id": "t2"}')
    context = load_context_file(path)
    assert (context.user_id, context.team_id, context.chat_id) == ("u2", "t2", "")
    assert context.identity == Identity(None, "u2", "t2")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"chat_id": "x",\n  oops}', r"ctx\.json:2:3: invalid JSON: "),
        ("[1, 2]", r"ctx\.json: the context must be a JSON object$"),
        (
            '{"authorized": "me"}',
            r"ctx\.json:1: field 'authorized' must be an object, got a string\n  hint:",
        ),
        (
            '{"metadata": [1]}',
            r"ctx\.json:1: field 'metadata' must be an object, got an array\n  hint:",
        ),
        (
            '{\n"chat": "c"}',
            r"ctx\.json:2: unknown field 'chat' \(did you mean 'chat_id'\?\)\n  hint:",
        ),
    ],
)
def test_a_bad_context_file_is_a_config_error_naming_it(tmp_path, text, message):
    path = tmp_path / "ctx.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_context_file(path)


def test_a_missing_context_file_is_a_config_error(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as raised:
        load_context_file(path)
    assert raised.value.message == f"--ctx {path}: file not found"
