"""Throughput of one large streamed answer, end to end: ``agent run -c loop`` against a
loopback server (in its own process) that streams N MB of text in small deltas.

Streaming must be linear: doubling the answer should double the time, not quadruple it.
The server writes pre-built server-sent events, so the time measured is the client's.

Run: .venv/bin/python bench/big_stream.py [--sizes 5,20,50] [--delta 32] [--transport http]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, agent_command, print_table, save


def event(delta: dict) -> bytes:
    """One server-sent ``data:`` event carrying ``delta`` as a chat-completion chunk."""
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "big"}
    chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    return f"data: {json.dumps(chunk)}\n\n".encode()


def body_pieces(megabytes: float, delta_chars: int) -> list[bytes]:
    """The SSE body of a ``megabytes`` MB answer in ``delta_chars``-character deltas, as
    HTTP chunks of about 64 KB."""
    count = int(megabytes * 1_000_000) // delta_chars
    one = event({"content": "x" * (delta_chars - 1) + " "})
    per_chunk = max(1, 65536 // len(one))
    pieces = [one * per_chunk] * (count // per_chunk)
    if count % per_chunk:
        pieces.append(one * (count % per_chunk))
    done = {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    pieces.append(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
    return pieces


async def serve(port: int, delta_chars: int) -> None:
    """Answer every chat request with a stream of the size its last message names (MB)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                request = json.loads(await reader.readexactly(length))
                megabytes = float(request["messages"][-1]["content"])
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n"
                )
                for piece in body_pieces(megabytes, delta_chars):
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_one(project: Path, megabytes: float) -> tuple[float, int, int]:
    """(wall seconds, bytes on stdout, exit code) of one ``agent run`` of that size."""
    started = time.perf_counter()
    done = subprocess.run(
        [*agent_command(), "run", "-c", "loop", str(megabytes)],
        cwd=project,
        capture_output=True,
        timeout=600,
    )
    return time.perf_counter() - started, len(done.stdout), done.returncode


def main() -> None:
    """Measure each size and print MB/s."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="5,20,50", help="answer sizes in MB")
    parser.add_argument("--delta", type=int, default=32, help="characters per delta")
    parser.add_argument("--transport", default="http", help="http, httpx or sdk")
    parser.add_argument("--limit", default="", help="max_response_bytes of the connector")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--delta", str(args.delta)],
        stdout=subprocess.PIPE,
        text=True,
    )
    rows = []
    try:
        assert server.stdout is not None
        server.stdout.readline()
        with tempfile.TemporaryDirectory() as folder:
            project = Path(folder)
            limit = f", max_response_bytes: {args.limit}" if args.limit else ""
            (project / "connectors.yml").write_text(
                f"loop: {{model: openai/big, api_base: 'http://127.0.0.1:{port}/v1', "
                f"api_key: none, timeout: 60, transport: {args.transport}{limit}}}\n",
                encoding="utf-8",
            )
            for size in (float(s) for s in args.sizes.split(",")):
                wall, printed, code = run_one(project, size)
                rows.append(
                    {
                        "mb": size,
                        "delta": args.delta,
                        "transport": args.transport,
                        "wall_s": round(wall, 2),
                        "mb_per_s": round(size / wall, 2),
                        "printed_mb": round(printed / 1e6, 2),
                        "exit": code,
                    }
                )
                print(rows[-1], flush=True)
    finally:
        server.terminate()
        server.wait()
    columns = ["mb", "delta", "transport", "wall_s", "mb_per_s", "printed_mb", "exit"]
    print_table(rows, [(c, c) for c in columns])
    print(f"\nwritten: {save('big_stream', {'rows': rows})}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        delta = int(sys.argv[sys.argv.index("--delta") + 1])
        asyncio.run(serve(int(sys.argv[2]), delta))
    else:
        sys.path.insert(0, str(ROOT))
        main()
