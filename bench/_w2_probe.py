"""Runs ``agent eval`` in this process with a few clocks attached; ``latency_breakdown.py``
starts it. Not part of agentcli: it reaches into private names (asyncio's ``Handle._run``,
``dataclasses._process_class``) because that is where the time goes, and it fails loudly
if they move.

Writes one JSON object to the path in ``AGENTCLI_PROBE_OUT``:
- ``marks``: milliseconds since the driver started the process (``AGENTCLI_PROBE_T0``; else
  since this script started) at: the CLI imported, the eval layer imported, the first request sent, the
  last response read, the end of ``main``;
- ``dataclasses_ms``/``dataclasses``: time spent defining dataclasses, and how many;
- with ``AGENTCLI_PROBE_PHASES=1``, ``phases_ms``: the event loop's CPU time by what the
  callback ran for: a case before its request was sent, the HTTP exchange, a case after
  its response, the outbox's batched view and results-file work, and everything else.
  Timing every callback costs time itself: read these as shares, not as absolute figures.
"""

from __future__ import annotations

import atexit
import contextvars
import dataclasses
import json
import os
import sys
import time
from contextlib import asynccontextmanager

# The driver passes the moment it started this process (perf_counter is the system's
# monotonic clock, the same in both): the marks then include the interpreter's start.
STARTED = float(os.environ.get("AGENTCLI_PROBE_T0") or time.perf_counter())
marks: dict[str, float] = {}
defined = {"ms": 0.0, "count": 0}
phases: dict[str, float] = {}
PHASE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("phase", default=None)
TIMING = os.environ.get("AGENTCLI_PROBE_PHASES") == "1"
clock = time.thread_time
running = {"name": "", "since": 0.0}  # the callback being timed: its phase, since when


def switch(phase: list[str] | None, name: str) -> None:
    """The case ``phase`` belongs to moves on to ``name``: the callback's time so far
    goes to the phase it was in."""
    if phase is None:
        return
    if TIMING and running["name"] == phase[0]:
        now = clock()
        phases[phase[0]] = phases.get(phase[0], 0.0) + (now - running["since"]) * 1000
        running.update(name=name, since=now)
    phase[0] = name


def mark(name: str) -> None:
    marks.setdefault(name, round((time.perf_counter() - STARTED) * 1000, 1))


_define = dataclasses._process_class  # type: ignore[attr-defined]


def _timed_define(cls, *args, **kwargs):
    started = time.perf_counter()
    try:
        return _define(cls, *args, **kwargs)
    finally:
        defined["ms"] += (time.perf_counter() - started) * 1000
        defined["count"] += 1


dataclasses._process_class = _timed_define  # type: ignore[attr-defined]


def _write() -> None:
    mark("exit")
    payload = {
        "marks": marks,
        "dataclasses_ms": round(defined["ms"], 1),
        "dataclasses": defined["count"],
        "phases_ms": {name: round(ms, 1) for name, ms in phases.items()},
    }
    with open(os.environ["AGENTCLI_PROBE_OUT"], "w", encoding="utf-8") as handle:
        json.dump(payload, handle)


atexit.register(_write)
sys.argv = ["agent", *sys.argv[1:]]

from agentcli import collector  # noqa: E402

collector.pause()  # as agentcli.cli.main.main does for `agent eval`, before it imports more
import agentcli.cli.main as cli  # noqa: E402

mark("cli imported")
import agentcli.eval.run.session  # noqa: E402, F401  (what `agent eval` imports next)

mark("eval layer imported")
import agentcli.eval.run.runner as runner  # noqa: E402
import agentcli.models.aiohttp_transport as transport  # noqa: E402

_post = transport.AiohttpTransport.post
_run_case = runner.EvalRunner._run_with_retries


@asynccontextmanager
async def _probed_post(self, body, timeout):
    phase = PHASE.get()
    mark("first request")
    switch(phase, "HTTP exchange")
    async with _post(self, body, timeout) as response:
        yield response
    marks["last response"] = round((time.perf_counter() - STARTED) * 1000, 1)
    switch(phase, "case after its response")


async def _probed_case(self, *args, **kwargs):
    phase = ["case up to its request"]
    PHASE.set(phase)
    try:
        return await _run_case(self, *args, **kwargs)
    finally:
        switch(phase, "case after its response")


transport.AiohttpTransport.post = _probed_post  # type: ignore[method-assign]
runner.EvalRunner._run_with_retries = _probed_case  # type: ignore[method-assign]

if TIMING:
    import asyncio.events

    _run = asyncio.events.Handle._run

    def _timed_run(handle: asyncio.events.Handle) -> None:
        callback = handle._callback  # type: ignore[attr-defined]
        owner = getattr(callback, "__self__", None)
        phase = handle._context.get(PHASE)  # type: ignore[attr-defined]
        if marks.get("first request") is None:
            name = "start-up (before the first request)"
        elif type(owner).__name__ == "Outbox":  # its timer, made in some case's context
            name = "view and results file (the outbox)"
        elif phase is not None:
            name = phase[0]
        else:
            # A case's first step starts before its context holds a phase.
            coroutine = owner.get_coro() if hasattr(owner, "get_coro") else None
            is_case = getattr(coroutine, "__qualname__", "") == _probed_case.__qualname__
            name = "case up to its request" if is_case else "everything else"
        running.update(name=name, since=clock())
        try:
            _run(handle)
        finally:
            name = running["name"]
            phases[name] = phases.get(name, 0.0) + (clock() - running["since"]) * 1000
            running.update(name="", since=0.0)

    asyncio.events.Handle._run = _timed_run  # type: ignore[method-assign]

try:
    cli.main()
finally:
    mark("main returned")
