"""prompts.yml, presets and their selection, @assets, global prompts and prompt variables."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentcli.assistant.package import AssistantPackage, load_package
from agentcli.assistant.prompts import (
    context_variables,
    global_prompts,
    load_presets,
    load_prompts,
    render_prompts,
    render_variables,
    select_prompts,
)
from agentcli.errors import PackageError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def system(content: str) -> str:
    return f"- role: system\n  content: {json.dumps(content)}\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "assistants"


def make(root: Path, data: dict | None = None, **files: str) -> AssistantPackage:
    """A package ``root/bot`` with package.yao from ``data`` and extra files (``/`` as ``__``)."""
    folder = root / "bot"
    write(folder / "package.yao", json.dumps({"name": "Bot", **(data or {})}))
    for name, text in files.items():
        write(folder / name.replace("__", "/"), text)
    return load_package(folder)


# ---------------------------------------------------------------------------- prompts.yml


def test_load_prompts(root: Path) -> None:
    package = make(
        root,
        **{
            "prompts.yml": "- role: system\n  content: You are Bot.\n"
            "- role: user\n  name: alice\n  content: hi\n"
            "- role: developer\n  content: be brief\n"
        },
    )
    assert load_prompts(package) == [
        {"role": "system", "content": "You are Bot."},
        {"role": "user", "content": "hi", "name": "alice"},
        {"role": "developer", "content": "be brief"},
    ]


def test_no_prompts_file(root: Path) -> None:
    assert load_prompts(make(root)) == []


def test_empty_prompts_file(root: Path) -> None:
    assert load_prompts(make(root, **{"prompts.yml": "# nothing yet\n"})) == []


def test_prompts_yaml_extension(root: Path) -> None:
    package = make(root, **{"prompts.yaml": system("x")})
    assert load_prompts(package) == [{"role": "system", "content": "x"}]


def test_returned_lists_are_fresh(root: Path) -> None:
    package = make(root, **{"prompts.yml": system("x")})
    load_prompts(package)[0]["content"] = "mutated"
    assert load_prompts(package)[0]["content"] == "x"


def test_bad_role_names_file_and_line(root: Path) -> None:
    package = make(root, **{"prompts.yml": system("ok") + "- role: robot\n  content: x\n"})
    with pytest.raises(PackageError) as info:
        load_prompts(package)
    assert info.value.path == str(package.path / "prompts.yml")
    assert info.value.line == 3
    assert "prompt 2: role must be one of system, user, assistant, developer" in str(info.value)


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("role: system\n", "must be a YAML list", 1),
        ("- just text\n", "prompt 1: must be a mapping", 1),
        ("- role: user\n", "prompt 1: content must be a string", 1),
        ("- role: user\n  content: [1]\n", "prompt 1: content must be a string", 2),
        ("- role: user\n  content: x\n  contnet: y\n", "unknown key 'contnet'", 3),
        ("- role: user\n  content: x\n  name: 3\n", "name must be a string", 3),
    ],
)
def test_prompt_validation(root: Path, text: str, message: str, line: int) -> None:
    package = make(root, **{"prompts.yml": text})
    with pytest.raises(PackageError, match=message) as info:
        load_prompts(package)
    assert info.value.line == line


def test_yaml_syntax_error_has_position(root: Path) -> None:
    package = make(root, **{"prompts.yml": "- role: user\n  content: [unclosed\n"})
    with pytest.raises(PackageError, match="invalid YAML") as info:
        load_prompts(package)
    assert info.value.path == str(package.path / "prompts.yml")
    assert info.value.line == 3


# ---------------------------------------------------------------------------- presets


@pytest.fixture
def preset_package(root: Path) -> AssistantPackage:
    return make(
        root,
        {"modes": ["chat", "task"], "default_mode": "task"},
        **{
            "prompts.yml": system("default"),
            "prompts__chat.yml": system("chat"),
            "prompts__task.yaml": system("task"),
            "prompts__chat__friendly.yml": system("friendly"),
            "prompts__notes.txt": "not a preset",
        },
    )


def test_load_presets_keys(preset_package: AssistantPackage) -> None:
    presets = load_presets(preset_package)
    assert list(presets) == ["chat", "chat.friendly", "task"]
    assert presets["chat.friendly"] == [{"role": "system", "content": "friendly"}]


def test_duplicate_preset_key(root: Path) -> None:
    package = make(root, **{"prompts__a.yml": system("1"), "prompts__a.yaml": system("2")})
    with pytest.raises(PackageError, match="prompt preset 'a' is defined twice"):
        load_presets(package)


def contents(messages: list[dict[str, str]]) -> list[str]:
    return [m["content"] for m in messages]


def test_selection_hook_preset_wins(preset_package: AssistantPackage) -> None:
    messages = select_prompts(
        preset_package, hook_preset="chat.friendly", metadata={"__prompt_preset": "chat"}
    )
    assert contents(messages) == ["friendly"]


def test_selection_metadata_preset_second(preset_package: AssistantPackage) -> None:
    assert contents(select_prompts(preset_package, metadata={"__prompt_preset": "chat"})) == [
        "chat"
    ]


def test_selection_default_mode_third(preset_package: AssistantPackage) -> None:
    assert contents(select_prompts(preset_package)) == ["task"]


def test_selection_prompts_yml_last(root: Path) -> None:
    package = make(
        root,
        {"default_mode": "nonexistent"},
        **{"prompts.yml": system("default"), "prompts__chat.yml": system("chat")},
    )
    assert contents(select_prompts(package)) == ["default"]


def test_selection_of_missing_preset_is_an_error(preset_package: AssistantPackage) -> None:
    with pytest.raises(PackageError) as info:
        select_prompts(preset_package, hook_preset="chinese")
    assert "prompt preset 'chinese' (from the Create hook's prompt_preset) does not exist" in str(
        info.value
    )
    assert "available presets: chat, chat.friendly, task" in str(info.value)
    with pytest.raises(PackageError, match="from metadata __prompt_preset"):
        select_prompts(preset_package, metadata={"__prompt_preset": "nope"})


# ---------------------------------------------------------------------------- @assets


def test_asset_as_whole_content(root: Path) -> None:
    package = make(
        root,
        **{
            "prompts.yml": "- role: system\n  content: '@assets/rules.md'\n",
            "assets__rules.md": "# Rules\n\nBe kind.\n",
        },
    )
    assert load_prompts(package) == [{"role": "system", "content": "# Rules\n\nBe kind.\n"}]


def test_asset_inline_reference(root: Path) -> None:
    package = make(
        root,
        **{
            "prompts.yml": system("Rules: @assets/docs/rules.txt. Tone: @assets/tone.md!"),
            "assets__docs__rules.txt": "R1",
            "assets__tone.md": "calm",
        },
    )
    assert contents(load_prompts(package)) == ["Rules: R1. Tone: calm!"]


def test_email_like_text_is_not_an_asset(root: Path) -> None:
    package = make(root, **{"prompts.yml": system("mail ops@assets/x please")})
    assert contents(load_prompts(package)) == ["mail ops@assets/x please"]


def test_missing_asset(root: Path) -> None:
    package = make(root, **{"prompts.yml": system("@assets/none.md")})
    with pytest.raises(PackageError, match=r"@assets/none\.md: file not found"):
        load_prompts(package)


def test_asset_dotdot_escape_rejected(root: Path) -> None:
    package = make(
        root,
        **{"prompts.yml": system("@assets/../package.yao"), "assets__ok.md": "ok"},
    )
    with pytest.raises(PackageError, match="points outside the package's assets/ folder"):
        load_prompts(package)


def test_asset_symlink_escape_rejected(root: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", "top secret")
    package = make(root, **{"prompts.yml": system("@assets/link.txt")})
    (package.path / "assets").mkdir()
    os.symlink(secret, package.path / "assets" / "link.txt")
    with pytest.raises(PackageError, match="points outside") as info:
        load_prompts(package)
    assert "top secret" not in str(info.value)


def test_asset_symlink_inside_assets_is_fine(root: Path) -> None:
    package = make(root, **{"prompts.yml": system("@assets/alias.md"), "assets__real.md": "real"})
    os.symlink(package.path / "assets" / "real.md", package.path / "assets" / "alias.md")
    assert contents(load_prompts(package)) == ["real"]


def test_asset_changes_are_seen(root: Path) -> None:
    package = make(root, **{"prompts.yml": system("@assets/a.md"), "assets__a.md": "one"})
    assert contents(load_prompts(package)) == ["one"]
    asset = package.path / "assets" / "a.md"
    asset.write_text("two!", encoding="utf-8")
    stat = asset.stat()
    os.utime(asset, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert contents(load_prompts(package)) == ["two!"]


# ---------------------------------------------------------------------------- global prompts


def test_global_prompts_prepended(root: Path) -> None:
    write(root / "prompts.yml", system("global"))
    package = make(root, **{"prompts.yml": system("own")})
    assert contents(global_prompts(package)) == ["global"]
    assert contents(select_prompts(package)) == ["global", "own"]


def test_global_prompts_disabled_by_package(root: Path) -> None:
    write(root / "prompts.yml", system("global"))
    package = make(root, {"disable_global_prompts": True}, **{"prompts.yml": system("own")})
    assert contents(select_prompts(package)) == ["own"]
    assert contents(select_prompts(package, disable_global_prompts=False)) == ["global", "own"]


def test_global_prompts_disabled_per_call(root: Path) -> None:
    write(root / "prompts.yml", system("global"))
    package = make(root, **{"prompts.yml": system("own")})
    assert contents(select_prompts(package, disable_global_prompts=True)) == ["own"]
    metadata = {"__disable_global_prompts": "true"}
    assert contents(select_prompts(package, metadata=metadata)) == ["own"]
    # The hook's explicit value wins over metadata.
    assert contents(select_prompts(package, metadata=metadata, disable_global_prompts=False)) == [
        "global",
        "own",
    ]


def test_global_prompt_assets_come_from_root_assets(root: Path) -> None:
    write(root / "prompts.yml", system("@assets/policy.md"))
    write(root / "assets" / "policy.md", "policy text")
    package = make(root)
    assert contents(select_prompts(package)) == ["policy text"]


def test_no_global_prompts_without_root(tmp_path: Path) -> None:
    write(tmp_path / "bot" / "package.yao", '{"name": "b"}')
    write(tmp_path / "prompts.yml", system("not global"))
    package = load_package(tmp_path / "bot")
    if package.root is not None:
        pytest.skip("an assistants/ folder exists above the temporary directory")
    assert select_prompts(package) == []


# ---------------------------------------------------------------------------- variables


NOW = datetime(2024, 3, 9, 7, 5, 3, tzinfo=UTC)


def test_sys_variables_with_fixed_now() -> None:
    text = (
        "$SYS.DATE|$SYS.TIME|$SYS.DATETIME|$SYS.TIMEZONE|$SYS.WEEKDAY|$SYS.YEAR|$SYS.MONTH|"
        "$SYS.DAY|$SYS.HOUR|$SYS.MINUTE|$SYS.SECOND|$SYS.UNIX|$SYS.UNKNOWN"
    )
    assert render_variables(text, ctx_vars={}, now=NOW) == (
        "2024-03-09|07:05:03|2024-03-09 07:05:03|UTC|Saturday|2024|03|09|07|05|03|"
        f"{int(NOW.timestamp())}|$SYS.UNKNOWN"
    )


def test_sys_timezone_offset_without_name() -> None:
    now = datetime(2024, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
    # A fixed-offset zone is named by its offset.
    assert render_variables("$SYS.TIMEZONE $SYS.HOUR", ctx_vars={}, now=now) == "UTC+08:00 12"


def test_env_variables() -> None:
    env = {"REGION": "eu", "EMPTY": ""}
    assert render_variables("[$ENV.REGION][$ENV.EMPTY][$ENV.UNSET]", ctx_vars={}, env=env) == (
        "[eu][][]"
    )


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GH_TOKEN", "client_secret", "DB_PASSWORD"])
def test_secret_env_variables_are_not_substituted(name: str) -> None:
    warnings: list[str] = []
    text = f"key=$ENV.{name}; again $ENV.{name}"
    result = render_variables(text, ctx_vars={}, env={name: "s3cr3t"}, warnings=warnings)
    assert result == "key=; again "
    assert warnings == [f"$ENV.{name} looks like a secret and was not put into the prompt"]


def test_ctx_variables(root: Path) -> None:
    package = make(root, {"description": "desc"})
    ctx = context_variables(
        package,
        chat_id="c1",
        locale="zh-cn",
        user_id="u1",
        team_id="t1",
        metadata={"user_tier": "gold", "flags": {"a": 1}, "vip": True, "ASSISTANT_ID": "spoof"},
    )
    text = (
        "$CTX.ASSISTANT_ID $CTX.ASSISTANT_NAME $CTX.ASSISTANT_DESCRIPTION $CTX.CHAT_ID "
        "$CTX.LOCALE $CTX.USER_ID $CTX.TEAM_ID $CTX.user_tier $CTX.USER_TIER $CTX.flags "
        "$CTX.vip [$CTX.missing]"
    )
    assert render_variables(text, ctx_vars=ctx) == (
        'bot Bot desc c1 zh-cn u1 t1 gold gold {"a": 1} true []'
    )


def test_values_are_not_expanded_twice() -> None:
    ctx = {"note": "$ENV.HOME and $CTX.other", "other": "x"}
    assert render_variables("$CTX.note", ctx_vars=ctx, env={"HOME": "/root"}) == (
        "$ENV.HOME and $CTX.other"
    )


def test_text_without_dollar_is_returned_as_is() -> None:
    text = "plain"
    assert render_variables(text, ctx_vars={}) is text


def test_render_prompts_returns_new_messages() -> None:
    messages = [{"role": "system", "content": "Today is $SYS.DATE", "name": "s"}]
    rendered = render_prompts(messages, ctx_vars={}, now=NOW)
    assert rendered == [{"role": "system", "content": "Today is 2024-03-09", "name": "s"}]
    assert messages[0]["content"] == "Today is $SYS.DATE"
