"""The interactive chat of ``agent run <assistant>``.

On a terminal the input is prompt_toolkit's ``PromptSession`` (line editing, arrow-key
history kept in ``$AGENTCLI_HOME/chat-history``); otherwise (``--chat`` with piped input,
tests) lines are read from the input stream. Either way the loop is the same:

- ``> `` prompt; ``exit``, ``quit`` or Ctrl-D leave; Ctrl-C at the prompt clears the line;
- the answer streams as it comes, tool calls are shown as they start and finish, and
  messages hooks send (``ctx.send``) are shown too;
- the first Ctrl-C while a turn runs aborts that turn only (a second one quits);
- ``!multi`` starts a message of several lines, ``!end`` sends it;
- ``/reset`` forgets the conversation, ``/save FILE`` appends it to FILE as one eval case
  asserting the tool calls and the answer it got (see ``save_case``), ``/help`` lists the
  commands.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from agentcli.cli.render import TurnPrinter
from agentcli.cli.sessions import Session
from agentcli.errors import AgentCliError, ConfigError

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from agentcli.assistant.conversation import Conversation
    from agentcli.assistant.session import Assistant, AssistantRegistry, RequestOptions

__all__ = ["HELP", "run_chat", "save_case"]

HELP = (
    "Type exit or quit (or press Ctrl-D) to leave, Ctrl-C to stop an answer.\n"
    "!multi starts a message of several lines, !end sends it.\n"
    "/reset forgets the conversation, /save FILE appends it to FILE as an eval case\n"
    "that asserts the tool calls and the answer of the last turn."
)
_HINT = "Type /help for commands; exit, quit or Ctrl-D to leave; Ctrl-C stops an answer."


class LineReader(Protocol):
    """Where the chat's lines come from; ``read`` raises EOFError at the end of input and
    KeyboardInterrupt when Ctrl-C is pressed at the prompt."""

    async def read(self, prompt: str) -> str:
        """The next line, without its newline."""
        ...


class StreamReader:
    """Lines from a plain stream; the prompt (and, from a pipe, the line read) is written to
    ``out`` so the transcript reads like a terminal session."""

    def __init__(self, stream: TextIO, out: TextIO) -> None:
        self.stream = stream
        self.out = out

    async def read(self, prompt: str) -> str:
        """The next line of the stream."""
        self.out.write(prompt)
        self.out.flush()
        line = self.stream.readline()
        if not line:
            self.out.write("\n")
            raise EOFError
        line = line.rstrip("\r\n")
        if not self.stream.isatty():
            self.out.write(line + "\n")
            self.out.flush()
        return line


class TerminalReader:
    """prompt_toolkit's prompt with a history file (arrow keys recall earlier lines)."""

    def __init__(self, history_file: Path) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        history_file.parent.mkdir(parents=True, exist_ok=True)
        self.session: PromptSession[str] = PromptSession(history=FileHistory(str(history_file)))

    async def read(self, prompt: str) -> str:
        """The next line typed."""
        return await self.session.prompt_async(prompt)


@contextmanager
def _on_sigint(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> Iterator[None]:
    """Route Ctrl-C to ``handler`` on the loop while a turn runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda *_: loop.call_soon_threadsafe(handler))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _case_messages(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """User messages and assistant answers with text, as ``{role, content}``."""
    messages = []
    for message in history:
        content = message.get("content")
        if message.get("role") in ("user", "assistant") and content:
            messages.append({"role": message["role"], "content": content})
    return messages


def _observed_calls(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls made after the last user message, as trajectory entries: the bare
    tool name (``orders__order_status`` -> ``order_status``) and the arguments sent."""
    last_user = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=-1)
    calls = []
    for message in history[last_user + 1 :]:
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            function = call.get("function") or {}
            entry: dict[str, Any] = {"name": str(function.get("name", "")).split("__", 1)[-1]}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = None
            if isinstance(arguments, dict) and arguments:
                entry["arguments"] = arguments
            calls.append(entry)
    return calls


def _excerpt(text: str, limit: int = 120) -> str:
    """A stable part of an answer to assert it contains: its first line, cut at a word
    boundary before ``limit`` characters (the tail of a long answer varies most)."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0]
    return cut or line[:limit]


def save_case(history: list[dict[str, Any]], path: Path, *, case_id: str, about: str) -> str:
    """Append the conversation to ``path`` as one eval case line and return its id.

    The case's ``input`` is the conversation up to and including the last user message (a
    plain string when that is the only message), so running it asks that question again
    with the same context. What was observed after it becomes the case's assertions: a
    ``trajectory`` of the tool calls made (``[]`` when none was) and a ``contains`` of the
    answer's first line, so the saved case fails when the behaviour changes. The id is
    ``case_id``, with ``-2``, ``-3``... when the file already has it.
    """
    messages = _case_messages(history)
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=None)
    if last_user is None:
        raise ConfigError("nothing to save yet: say something first")
    asked = messages[: last_user + 1]
    case_input: str | list[dict[str, Any]] = asked
    if len(asked) == 1 and isinstance(asked[0]["content"], str):
        case_input = asked[0]["content"]
    answers = [m["content"] for m in messages[last_user + 1 :] if isinstance(m["content"], str)]
    checks: list[dict[str, Any]] = [{"type": "trajectory", "value": _observed_calls(history)}]
    excerpt = _excerpt(answers[-1]) if answers else ""
    if excerpt:
        checks.append({"type": "contains", "value": excerpt})
    taken = _case_ids(path)
    unique, number = case_id, 1
    while unique in taken:
        number += 1
        unique = f"{case_id}-{number}"
    case = {"id": unique, "description": about, "input": case_input, "assert": checks}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(case, ensure_ascii=False) + "\n")
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror}") from None
    return unique


def _case_ids(path: Path) -> set[str]:
    ids: set[str] = set()
    if not path.is_file():
        return ids
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            case = json.loads(line)
        except ValueError:
            continue
        if isinstance(case, dict) and isinstance(case.get("id"), str):
            ids.add(case["id"])
    return ids


class Chat:
    """The chat loop over one conversation."""

    def __init__(
        self,
        conversation: Conversation,
        reader: LineReader,
        out: TextIO,
        printer: TurnPrinter,
        session: Session,
        cwd: Path,
    ) -> None:
        self.conversation = conversation
        self.reader = reader
        self.out = out
        self.printer = printer
        self.session = session
        self.cwd = cwd
        self.saved = 0

    def say(self, text: str) -> None:
        """Write a line of the chat's own."""
        self.out.write(text + "\n")
        self.out.flush()

    async def run(self) -> int:
        """Read and answer lines until the user leaves; the exit code."""
        while True:
            try:
                line = await self.reader.read("> ")
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            text = line.strip()
            if text.lower() in ("exit", "quit"):
                return 0
            if text.startswith("!multi"):
                gathered = await self._multi()
                if gathered is None:
                    return 0
                text = gathered
            elif text.startswith("/"):
                self._command(text)
                continue
            if text.strip() and await self._turn(text) == "quit":
                return 130

    async def _multi(self) -> str | None:
        """Lines up to ``!end``; None when the input ended first."""
        lines: list[str] = []
        while True:
            try:
                line = await self.reader.read("... ")
            except KeyboardInterrupt:
                self.say("(message discarded)")
                return ""
            except EOFError:
                return None
            if line.strip() == "!end":
                return "\n".join(lines)
            lines.append(line)

    def _command(self, text: str) -> None:
        name, _, argument = text.partition(" ")
        if name == "/reset":
            self.conversation.reset()
            self.say("(conversation forgotten)")
        elif name == "/save":
            if not argument.strip():
                self.say("usage: /save FILE")
                return
            path = self.cwd / Path(argument.strip()).expanduser()
            self.saved += 1
            about = f"saved from chat session {self.session.name} with {self.session.assistant_id}"
            try:
                case_id = save_case(
                    self.conversation.history,
                    path,
                    case_id=f"{self.session.name}-{self.saved}",
                    about=about,
                )
            except AgentCliError as error:
                self.say(f"error: {error}")
                return
            self.say(f"(saved case {case_id} to {path})")
        elif name == "/help":
            self.say(HELP)
        else:
            self.say(f"unknown command {name}; try /help")

    async def _turn(self, text: str) -> str:
        """Answer one message; ``"quit"`` when a second Ctrl-C asked to leave."""
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self.conversation.send(text))
        interrupts = 0

        def interrupt() -> None:
            nonlocal interrupts
            interrupts += 1
            if interrupts == 1 and self.conversation.abort():
                return
            task.cancel()

        with _on_sigint(loop, interrupt):
            try:
                reply = await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                self.printer.aborted()
                return "quit" if interrupts > 1 else "aborted"
            except AgentCliError as error:
                self.printer.out.newline()
                self.say(f"error: {error}")
                return "error"
        self.printer.finish_reply(reply)
        return reply.status


_RECAP_TURNS = 3
_RECAP_WIDTH = 300  # characters of one message shown; the log keeps all of it


def _recap(chat: Chat, session: Session) -> None:
    """The last turns of a resumed session, as they were shown, so the user sees where the
    conversation stands."""
    said, earlier = session.log.last_turns(_RECAP_TURNS)
    if earlier:
        chat.say(f"(… {earlier} earlier turn{'' if earlier == 1 else 's'})")
    for role, text in said:
        if len(text) > _RECAP_WIDTH:
            text = text[: _RECAP_WIDTH - 1] + "…"
        chat.say(f"> {text}" if role == "user" else text)


def _reader(stdin: TextIO, stdout: TextIO, *, lines: bool) -> LineReader:
    if not lines and stdin.isatty() and stdout.isatty():
        from agentcli.assistant.memory import default_memory_path

        return TerminalReader(default_memory_path().parent / "chat-history")
    return StreamReader(stdin, stdout)


def run_chat(
    registry: AssistantRegistry,
    assistant: Assistant,
    options: RequestOptions,
    session: Session,
    *,
    verbose: bool = False,
    stdin: TextIO,
    stdout: TextIO,
    lines: bool = False,
) -> int:
    """Chat with ``assistant`` until the user leaves; returns the exit code. ``lines`` reads
    plain lines even on a terminal."""
    printer = TurnPrinter(verbose=verbose, out=stdout, err=stdout)
    options.on_event = printer.on_event
    options.on_output = printer.on_output
    options.chat_id = options.chat_id or session.name
    conversation = assistant.conversation(options, storage=session.log)

    async def main() -> int:
        try:
            connector = conversation.connector  # no connector: an error before the banner
            chat = Chat(
                conversation,
                _reader(stdin, stdout, lines=lines),
                stdout,
                printer,
                session,
                Path.cwd(),
            )
            chat.say(f"Chatting with {assistant.id} ({connector})")
            chat.say(_HINT)
            count = session.log.message_count()
            state = f"resumed, {count} messages" if session.resumed else "new"
            chat.say(f"Session {session.name} ({state}): {session.log.path}")
            if session.resumed:
                _recap(chat, session)
            return await chat.run()
        finally:
            session.log.close()
            await registry.aclose()

    return asyncio.run(main())
