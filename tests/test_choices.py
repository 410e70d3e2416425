"""``one_of`` narrows untyped input to a Literal's values; message roles use it."""

from __future__ import annotations

import pytest

from agentcli.choices import one_of
from agentcli.runtime import Message, as_messages
from agentcli.runtime.messages import ROLES


def test_one_of_returns_the_matching_choice_or_none() -> None:
    modes = ("one-at-a-time", "all")
    assert one_of("all", modes) == "all"
    assert one_of("ALL", modes) is None
    assert one_of(None, modes) is None
    assert one_of(["all"], modes) is None


def test_every_role_round_trips() -> None:
    for role in ROLES:
        assert Message.from_dict(Message(role=role).to_dict()).role == role
        assert as_messages({"role": role, "content": "x"})[0].role == role


def test_an_openai_dict_without_a_role_is_a_user_message() -> None:
    assert as_messages({"content": "hi"})[0].role == "user"


@pytest.mark.parametrize("load", [as_messages, Message.from_dict])
def test_an_unknown_role_names_the_roles(load) -> None:
    with pytest.raises(
        ValueError, match=r"unknown message role 'robot' \(expected one of system, "
    ):
        load({"role": "robot", "content": "x"})
