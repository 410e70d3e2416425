"""``agent view``: serve a local, read-only web viewer of the results files under a folder."""

from __future__ import annotations

import errno
import ipaddress
import socket
from pathlib import Path

import typer

from agentcli.cli.errors import guarded

HELP = """Browse the results files under PATH in a web browser: the runs (date, assistant,
connectors, pass rate, duration, cost), a run's results (failures first; filter by
status, tag or who a failure is on; search; pages), each case (input, output, every
assertion's expected and actual, tool calls, the transcript of a dynamic case), the
connector matrix, and any two runs compared as agent diff compares them. New runs show up
on reload. Read-only; bound to 127.0.0.1 unless --host says otherwise.

\b
Examples:
  agent view                       the runs folder (.agentcli/runs, else this folder)
  agent view assistants/expense/tests
  agent view run.jsonl             one results file's page
  agent view --port 0 --no-open    any free port; the URL is printed
"""

DEFAULT_PORT = 8750


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("view", help=HELP)(guarded(view))


def view(
    path: Path | None = typer.Argument(
        None,
        metavar="[PATH]",
        help="Folder of results files, or one results file (default: the project's runs folder, "
        ".agentcli/runs, else .).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(
        DEFAULT_PORT, "--port", min=0, max=65535, help="Port to listen on (0: any free one)."
    ),
    no_open: bool = typer.Option(False, "--no-open", help="Do not open a browser."),
) -> None:
    """Serve the viewer until interrupted."""
    from agentcli.errors import ConfigError

    target = path if path is not None else default_root()
    if not target.exists():
        raise ConfigError(
            f"{target}: no such file or folder",
            hint="give a folder of results files (agent eval -o DIR/run.jsonl writes one)",
        )
    root, first = (target.parent, target) if target.is_file() else (target, None)
    if first is not None:
        _check_results_file(root, first)
    listener = _listen(host, port)
    address, bound = listener.getsockname()[:2]
    url = f"http://{_url_host(host)}:{bound}/"
    if first is not None:
        from urllib.parse import urlencode

        url += "run?" + urlencode({"file": first.resolve().relative_to(root.resolve()).as_posix()})
    typer.echo(f"agent view: {root.resolve()} at {url}  (Ctrl+C stops)")
    if not _loopback(address):
        typer.echo(
            f"warning: listening on {host}: anyone who can reach this machine can read these results",
            err=True,
        )
    if not no_open:
        import webbrowser

        webbrowser.open(url)
    _serve(root, listener, host)


def default_root(cwd: Path | None = None) -> Path:
    """The project's runs folder (``runs_folder`` of its agentcli.yml, else
    ``.agentcli/runs`` under its root) when it exists, else the current folder."""
    from agentcli.project import load_project
    from agentcli.project.runs import runs_folder

    cwd = cwd or Path.cwd()
    runs = runs_folder(load_project(cwd))
    return runs if runs.is_dir() else cwd


def _check_results_file(root: Path, path: Path) -> None:
    """A ConfigError unless ``path`` is a results file the viewer can open (before the
    server starts: a case file or a config would only give a page saying it is not one)."""
    from agentcli.cli.viewer.catalog import Catalog, NotFound
    from agentcli.errors import ConfigError

    try:
        Catalog(root.resolve()).open(path.name)
    except NotFound:
        raise ConfigError(
            f"{path}: not a results file (one starts with a header line, as agent eval "
            "-o FILE.jsonl writes it)",
            hint="give a results file, or the folder that holds them",
        ) from None


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (bound before the URL is printed, so port 0's
    real port is known and a browser opened at once is answered)."""
    from agentcli.errors import ConfigError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise ConfigError(
            f"--host {host}: not an address of this machine ({error.strerror})",
            hint="use 127.0.0.1 (the default), or an address this machine has",
        ) from None
    family, kind, proto, _, address = infos[0]
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
        listener.listen(128)
    except OSError as error:
        listener.close()
        busy = error.errno == errno.EADDRINUSE
        raise ConfigError(
            f"{host}:{port}: "
            + ("the port is in use" if busy else f"cannot listen there ({error.strerror})"),
            hint="pick another --port (0: any free one)" if busy else "check --host and --port",
        ) from None
    return listener


def _serve(root: Path, listener: socket.socket, host: str) -> None:
    """Run uvicorn on ``listener`` until interrupted (Ctrl+C ends it cleanly)."""
    import uvicorn

    from agentcli.cli.viewer.app import LOCAL_HOSTS, create_app

    hosts = [*LOCAL_HOSTS, host] if not _any_address(host) else ["*"]
    config = uvicorn.Config(
        create_app(root, hosts=hosts),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,  # Ctrl+C does not wait on a browser's open connection
    )
    served: list[bool] = []

    class Server(uvicorn.Server):
        async def main_loop(self) -> None:
            served.append(True)  # uvicorn gets here only when no signal came as it started
            await super().main_loop()

    try:
        Server(config).run(sockets=[listener])
    except KeyboardInterrupt:
        # uvicorn re-raises the Ctrl+C it shut down on: once it served, stopping is how a
        # viewer ends (0); before, the command was interrupted, as any other is (130).
        if not served:
            raise typer.Exit(130) from None
    finally:
        listener.close()


def _loopback(address: str) -> bool:
    """Whether ``address`` is a loopback address."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _any_address(host: str) -> bool:
    """``0.0.0.0`` or ``::``: every address (any Host header names this server)."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _url_host(host: str) -> str:
    """The host part of the printed URL (an IPv6 address in brackets)."""
    shown = "127.0.0.1" if _any_address(host) else host
    return f"[{shown}]" if ":" in shown else shown
