"""The one error hierarchy of agentcli.

Every layer raises these; the CLI turns them into a one-line message and an exit code
(a traceback only with ``--debug``)::

    AgentCliError                      base; ``exit_code`` 2 unless said otherwise
    ├── ConfigError                    connectors.yml, --ctx, CLI values, missing API keys
    ├── PackageError                   an assistant package on disk (package.yao, prompts, locales, mcps)
    │   └── UnknownAssistantError      an id that resolves to no package
    ├── CaseFileError                  an eval case file (file:line: message)
    ├── ModelError                     a model call that failed
    │   ├── RateLimited                429 / provider throttling (retryable)
    │   ├── ProviderError              5xx, connection failures, bad responses (5xx retryable)
    │   │   └── ResponseTooLarge       a response past the connector's max_response_bytes
    │   ├── ModelTimeout               the provider did not answer in time (retryable)
    │   ├── AuthenticationError        401/403 or a missing key (not retryable)
    │   └── BadRequestError            4xx the caller caused (not retryable)
    ├── ToolError                      a tool could not be defined or called
    │   ├── ToolServerError            an MCP server failed to start or stopped (exit 1)
    │   └── SandboxError               a sandbox could not be made or used (exit 1)
    │       ├── SandboxPathError       a path that would leave the workspace (exit 2)
    │       ├── SandboxExecError       a command that exited non-zero (returncode, stderr)
    │       └── SandboxTimeout         a command killed at its timeout
    ├── HookError                      a Create/Next hook or eval hook raised
    ├── OutputError                    results or a report could not be written once the run began
    │   └── OutputClosed               stdout's reader went away (| head): a quiet exit 141
    ├── StorageError                   a store on disk (a session file, the memory store) is unusable now
    └── AgentRuntimeError              misuse of the runtime
        ├── AgentBusyError             send(if_busy="reject") while a turn runs
        ├── AgentWaitTimeout           wait(timeout=...) ran out while the agent was busy
        ├── ToolConflictError          two sources registered the same tool name
        └── ToolChoiceViolationError   the model ignored an enforced tool choice

Control flow (abort, max steps) is not an error: it is carried by events and stop reasons.
"""

from __future__ import annotations

from typing import ClassVar, Literal

__all__ = [
    "AgentBusyError",
    "AgentCliError",
    "AgentRuntimeError",
    "AgentWaitTimeout",
    "AuthenticationError",
    "BadRequestError",
    "CaseFileError",
    "ConfigError",
    "HookError",
    "ModelError",
    "ModelErrorKind",
    "ModelTimeout",
    "OutputClosed",
    "OutputError",
    "PackageError",
    "ProviderError",
    "RateLimited",
    "ReplayMiss",
    "ResponseTooLarge",
    "SandboxError",
    "SandboxExecError",
    "SandboxPathError",
    "SandboxTimeout",
    "SearchError",
    "StorageError",
    "ToolChoiceViolationError",
    "ToolConflictError",
    "ToolError",
    "ToolServerError",
    "UnknownAssistantError",
]


class AgentCliError(Exception):
    """Base of every error agentcli raises on purpose."""

    exit_code: int = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ConfigError(AgentCliError):
    """Configuration the user supplied is wrong or missing."""


class PackageError(AgentCliError):
    """An assistant package on disk could not be loaded."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        location = ""
        if path:
            location = path
            if line is not None:
                location += f":{line}"
                if column is not None:
                    location += f":{column}"
            location += ": "
        super().__init__(location + message, hint=hint)
        self.detail = message  # without the location
        self.path = path
        self.line = line
        self.column = column


class UnknownAssistantError(PackageError):
    """An assistant id that resolves to no package."""


class CaseFileError(AgentCliError):
    """An eval case file is malformed; carries every problem found, as ``file:line: message``."""

    def __init__(self, problems: list[str] | str, *, hint: str | None = None) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems), hint=hint)


ModelErrorKind = Literal[
    "provider_error", "rate_limit", "timeout", "auth", "bad_request", "replay_miss"
]


class ModelError(AgentCliError):
    """A model call failed."""

    exit_code = 1
    retryable: bool = False
    kind: ClassVar[ModelErrorKind] = "provider_error"  # the classification reports show

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status_code = status_code
        self.retry_after = retry_after
        self.attempts = attempts


class ReplayMiss(ModelError):
    """A replayed case made a call its cassette holds no recording of (not retried)."""

    kind = "replay_miss"


class RateLimited(ModelError):
    """The provider throttled the request (HTTP 429)."""

    retryable = True
    kind = "rate_limit"


class ProviderError(ModelError):
    """A server-side or transport failure; 5xx and connection errors are retryable."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = True,
        status_code: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
        hint: str | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, retry_after=retry_after, attempts=attempts, hint=hint
        )
        self.retryable = retryable


class ResponseTooLarge(ProviderError):
    """A response passed the connector's ``max_response_bytes`` (not retryable: the same
    request would stream as much again)."""

    def __init__(self, label: str, limit: int) -> None:
        super().__init__(
            f"{label}: the response passed max_response_bytes ({limit:,} bytes) and was cut",
            retryable=False,
            hint="raise max_response_bytes on the connector in connectors.yml, or ask the "
            "model for a shorter answer",
        )
        self.limit = limit


class ModelTimeout(ModelError):
    """The provider did not answer within the timeout."""

    retryable = True
    kind = "timeout"


class AuthenticationError(ModelError):
    """Credentials were rejected or are missing."""

    exit_code = 2
    kind = "auth"


class BadRequestError(ModelError):
    """The request was rejected as invalid (4xx other than auth and rate limits)."""

    kind = "bad_request"


class ToolError(AgentCliError):
    """A tool could not be defined or called."""


class ToolServerError(ToolError):
    """An MCP server that could not start (command not found, exited at once, never
    answered) or stopped: a failure of the run, not bad input, so exit 1."""

    exit_code = 1


class SearchError(ToolError):
    """A search (``ctx.search``, the automatic search before a model call) that failed: a
    provider that refused the key, rate-limited, failed or did not answer in time."""

    exit_code = 1


class SandboxError(ToolError):
    """A sandbox could not be made (an isolating backend that is missing or refused) or
    used: a failure of the run's environment, so exit 1."""

    exit_code = 1


class SandboxPathError(SandboxError):
    """A path given to a sandbox that would leave its workspace (``..``, an absolute path
    outside it, a symlink out): bad input, so exit 2."""

    exit_code = 2


class SandboxExecError(SandboxError):
    """A command run in a sandbox exited non-zero. ``returncode`` is its exit status (not
    ``exit_code``, which every AgentCliError keeps for the CLI's own), ``stdout`` and
    ``stderr`` what it printed (cut at the sandbox's output limit)."""

    def __init__(self, argv: list[str], returncode: int, stdout: str, stderr: str) -> None:
        tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
        shown = f": {tail[0][:300]}" if tail else ""
        super().__init__(f"{_command_words(argv)} exited with status {returncode}{shown}")
        self.argv = list(argv)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


class SandboxTimeout(SandboxError):
    """A command run in a sandbox went past its timeout; its whole process group was killed."""

    def __init__(self, argv: list[str], timeout: float, stdout: str = "", stderr: str = "") -> None:
        super().__init__(f"{_command_words(argv)} timed out after {timeout:g}s and was killed")
        self.argv = list(argv)
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr


def _command_words(argv: list[str]) -> str:
    """A command for a message: its words, shortened."""
    text = " ".join(argv)
    return repr(text if len(text) <= 80 else text[:77] + "...")


class HookError(AgentCliError):
    """A user hook (Create/Next, Before/After, ...) raised."""

    exit_code = 1


class OutputError(AgentCliError):
    """Results or a report could not be written after work began (a full disk, an I/O error).

    Not exit 2: that means bad input found before anything ran. The message says where the
    results written so far are."""

    exit_code = 1


class OutputClosed(OutputError):
    """The reader of stdout went away (``agent eval -o - | head``): not a failure to
    report. The command stops quietly with the shell's status for a closed pipe."""

    exit_code = 141  # 128 + SIGPIPE, as a command the pipe killed would end


class StorageError(AgentCliError):
    """A store on disk could not be read or written: a corrupt session file, a memory
    store another process holds locked. Not a misuse of the runtime: the message names the
    file and what to do."""


class AgentRuntimeError(AgentCliError):
    """The runtime was used in a way it does not allow."""


class AgentBusyError(AgentRuntimeError):
    """``send(if_busy="reject")`` while a turn is active."""


class AgentWaitTimeout(AgentRuntimeError, TimeoutError):
    """``agent.wait(timeout=...)`` ran out while the agent was still busy."""


class ToolConflictError(AgentRuntimeError):
    """Two sources registered the same tool name at assembly."""


class ToolChoiceViolationError(AgentRuntimeError):
    """The model ignored an enforced tool choice."""
