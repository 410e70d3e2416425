"""``ctx.sandbox`` in a request: hooks use it (sync and async, PascalCase too), the model
uses the sandbox tools through the ToolBox, one workspace per request, removed after it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.package import load_package
from agentcli.assistant.sandbox import SandboxSpec, create_sandbox
from agentcli.assistant.session import AssistantRegistry, RequestOptions
from agentcli.errors import PackageError
from tests.assistant.test_context import write

HOOKS = """
from agentcli.errors import SandboxExecError


def Create(ctx, messages):
    box = ctx.sandbox
    box.WriteFile("from_hook.txt", "written by Create")
    said = box.Exec(["cat", "from_hook.txt"])
    try:
        box.exec(["sh", "-c", "echo no >&2; exit 5"])
    except SandboxExecError as error:
        said += f" | status {error.returncode}: {error.stderr.strip()}"
    ctx.send(said)
    return None


async def Next(ctx, payload):
    box = ctx.sandbox
    return {"data": {
        "file": await box.read_file("made_by_model.txt"),
        "names": [entry["name"] for entry in await box.ListDir(".")],
        "workdir": box.workdir,
        "backend": box.backend,
    }}
"""

RULES = """
rules:
  - when: {user: "go"}
    call: {name: write_file, arguments: {path: made_by_model.txt, content: "from the model"}}
  - when: {tool_result: write_file}
    call: {name: exec, arguments: {argv: ["sh", "-c", "cat made_by_model.txt; exit 2"]}}
  - when: {tool_result: exec}
    call: {name: read_file, arguments: {path: ../escape.txt}}
  - when: {tool_result: read_file}
    say: done
"""


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Workspaces are made here, so a test sees what is left behind."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    return folder


@pytest.fixture
async def registry(tmp_path: Path, temp: Path):
    root = tmp_path / "assistants"
    write(
        root / "coder",
        {
            "package.yao": '{"name": "C", "connector": "scripted", "sandbox": {"tools": true}}',
            "scripted.yml": RULES,
            "src/index.py": HOOKS,
        },
    )
    write(root / "plain", {"package.yao": '{"name": "P", "connector": "echo"}'})
    registry = AssistantRegistry(
        root, cwd=tmp_path, memory_store=MemoryStore(tmp_path / "memory.sqlite3")
    )
    yield registry
    await registry.aclose()


async def test_hooks_and_the_model_share_one_workspace_removed_after_the_request(
    registry, temp: Path
) -> None:
    reply = await registry.get("coder").respond("go")
    assert reply.sent[0]["props"]["content"] == "written by Create | status 5: no"
    calls = [(call.server, call.tool) for call in reply.tool_calls]
    assert calls == [("sandbox", "write_file"), ("sandbox", "exec"), ("sandbox", "read_file")]
    write_call, exec_call, read_call = reply.tool_calls
    assert write_call.result == {"path": "made_by_model.txt", "bytes": 14}
    # A failing command is a result the model reads, not a tool error.
    assert exec_call.error is None
    assert exec_call.result == {"exit_code": 2, "stdout": "from the model", "stderr": ""}
    assert read_call.error is not None and "'..' part" in read_call.error
    data = reply.next
    assert data["file"] == "from the model" and data["backend"] == "local"
    assert data["names"] == ["from_hook.txt", "made_by_model.txt"]
    assert not Path(data["workdir"]).exists()
    assert list(temp.iterdir()) == []


async def test_each_request_gets_a_workspace_of_its_own(registry) -> None:
    first = await registry.get("coder").respond("go")
    second = await registry.get("coder").respond("go")
    assert first.next["workdir"] != second.next["workdir"]


async def test_the_model_is_offered_the_sandbox_tools_only_when_asked(registry) -> None:
    coder = registry.get("coder")
    names = [tool.name for tool in await coder.toolbox.tools(sandbox=True)]
    assert names == [
        "sandbox__exec",
        "sandbox__read_file",
        "sandbox__write_file",
        "sandbox__list_dir",
    ]
    assert await coder.toolbox.tools() == []
    reply = await registry.get("plain").respond("hello")
    assert reply.tool_calls == []


async def test_no_sandbox_without_a_spec_and_a_lent_one_is_kept(registry, temp: Path) -> None:
    conversation = registry.get("plain").conversation()
    ctx = conversation._context()
    assert ctx.sandbox is None
    ctx.close()
    lent = create_sandbox(SandboxSpec(files={"seed.txt": "seeded"}))
    try:
        ctx = registry.get("plain").conversation(RequestOptions(sandbox=lent))._context()
        assert await ctx.sandbox.read_file("seed.txt") == "seeded"
        ctx.close()
        assert lent.workdir.exists()  # the lender removes it
    finally:
        lent.remove()


def test_package_sandbox_is_read_and_checked(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "p",
        {"package.yao": '{"name": "P",\n "sandbox": {"backend": "bwrap", "timeout": "2m",'
         ' "network": true, "files": {"a.txt": "A"}}}'},
    )  # fmt: skip
    spec = load_package(folder).sandbox
    assert spec == SandboxSpec(backend="bwrap", timeout=120, network=True, files={"a.txt": "A"})
    write(folder, {"package.yao": '{"name": "P",\n "sandbox": {"timeout": "soon", "tool": true}}'})
    with pytest.raises(PackageError) as caught:
        load_package(folder)
    message = str(caught.value)
    assert f"{folder / 'package.yao'}:2:" in message
    assert 'unknown key "tool" (did you mean "tools"?)' in message
    assert "sandbox.timeout: invalid duration" in message
    write(folder, {"package.yao": '{"name": "P", "sandbox": {"backend": "docker"}}'})
    with pytest.raises(PackageError, match="must be one of local, bwrap"):
        load_package(folder)


async def test_sandbox_tools_under_a_cassette_are_recorded_and_replayed(tmp_path: Path) -> None:
    """The sandbox tools go through the ToolBox's cassette path: a recording keeps their
    listing and calls; a replay answers them without running anything."""
    root = tmp_path / "assistants"
    write(root / "coder", {"package.yao": json.dumps({"name": "C", "connector": "scripted",
                                                       "sandbox": {"tools": True}}),
                           "scripted.yml": RULES})  # fmt: skip
    from agentcli.assistant import cassette as tape

    path = tmp_path / "tape.jsonl"
    replies = []
    for mode in ("record", "replay"):
        registry = AssistantRegistry(
            root, cwd=tmp_path, memory_store=MemoryStore(tmp_path / "m.sqlite3"), cassettes=mode
        )
        cassette = tape.Cassette.open(path, mode, "go", None)
        try:
            with tape.use(cassette):
                replies.append(await registry.get("coder").respond("go"))
        finally:
            await registry.aclose()
        if cassette.records:
            cassette.save()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    listing = next(line for line in lines if line["type"] == "tools")
    assert listing["request"] == {"servers": None, "sandbox": True}
    assert [tool["server"] for tool in listing["reply"]] == ["sandbox"] * 4
    recorded = [line["request"] for line in lines if line["type"] == "tool"]
    assert [(r["server"], r["tool"]) for r in recorded][:2] == [
        ("sandbox", "write_file"),
        ("sandbox", "exec"),
    ]
    for reply in replies:
        assert reply.tool_calls[1].result == {
            "exit_code": 2,
            "stdout": "from the model",
            "stderr": "",
        }
