"""The interactive chat on a real pseudo-terminal (pexpect): banner, streamed answers,
Ctrl-C aborting a slow tool without ending the chat, /save, Ctrl-D leaving with 0."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect
import pytest

# prompt_toolkit draws "> " as ">", backspace, "cursor 2 right" on an xterm
PROMPT = r">(?:\x08\x1b\[2C| )"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def chat(tmp_path: Path):
    write(
        tmp_path / "assistants" / "slow",
        {
            "package.yao": '{"name": "Slow", "connector": "scripted"}',
            "scripted.yml": "chunk_delay: 0.05\n"
            "rules:\n"
            "  - when: {user: slow}\n    call: {name: nap, arguments: {seconds: 60}}\n"
            "  - when: {tool_result: nap}\n    say: woke up\n"
            "  - say: Hello there, my friend.\n",
            "mcps/t.mcp.yao": '{"transport": "process", "tools": {"nap": "t.Nap"}}',
            "src/t.py": "import asyncio\n\nasync def Nap(args):\n"
            "    await asyncio.sleep(args['seconds'])\n",
        },
    )
    env = {
        **os.environ,
        "AGENTCLI_HOME": str(tmp_path / "home"),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "NO_COLOR": "1",
    }
    env.pop("AGENT_ROOT", None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agentcli", "run", "slow"],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_chat_on_a_terminal(chat, tmp_path: Path) -> None:
    chat.expect_exact("Chatting with slow (scripted)")
    chat.expect_exact("Ctrl-C stops an answer")
    chat.expect(PROMPT)

    chat.send("hi\r")
    chat.expect_exact("Hello there,")  # the first chunk arrives before the rest
    chat.expect_exact("my friend.")
    chat.expect(PROMPT)

    chat.send("slow please\r")
    chat.expect_exact("⚙ nap (t)")
    chat.sendintr()  # Ctrl-C while the tool sleeps
    chat.expect_exact("(aborted)")
    chat.expect(PROMPT)

    chat.send("still there?\r")  # the chat goes on
    chat.expect_exact("Hello there, my friend.")
    chat.expect(PROMPT)

    chat.send("/save saved.jsonl\r")
    chat.expect_exact("(saved case slow-")
    chat.expect(PROMPT)

    chat.send("half a line")
    chat.sendintr()  # Ctrl-C at the prompt only clears the line
    chat.send("/help\r")  # answered, so the chat is still there and reading
    chat.expect_exact("/reset forgets the conversation")
    chat.expect(PROMPT)
    chat.sendeof()  # Ctrl-D leaves
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0

    case = json.loads((tmp_path / "saved.jsonl").read_text(encoding="utf-8"))
    assert [m["content"] for m in case["input"] if m["role"] == "user"] == [
        "hi",
        "slow please",
        "still there?",
    ]
    (log,) = (tmp_path / "home" / "sessions").glob("slow-*.jsonl")
    said = [json.loads(line)["data"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert "half a line" not in [m.get("content") for m in said if m.get("role") == "user"]
    history = (tmp_path / "home" / "chat-history").read_text(encoding="utf-8")
    assert "+slow please" in history  # arrow-key history is kept in a file
