"""The viewer's Starlette application: GET-only routes rendering Jinja2 templates.

Templates render in Jinja2's sandbox with autoescape on: every id, input, output and
argument of a results file is text on the page, never markup. A Content-Security-Policy
allows only the viewer's own stylesheet and script, and the Host header must name the
address served (a page of another site cannot reach the viewer by DNS rebinding).
Endpoints are plain functions: Starlette runs them in its thread pool, so reading a large
file does not stall the server's event loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentcli.errors import AgentCliError
from agentcli.eval.reports._view import (
    cost_text,
    failure_message,
    format_duration,
    format_k,
    format_percent,
    input_text,
    one_line,
    summary_pass_rate,
    value_text,
)
from agentcli.eval.results.codec import to_json
from agentcli.eval.results.matrix import header_connectors
from agentcli.eval.results.model import header_names
from agentcli.models.pricing import format_usd

from .casepage import case_page
from .catalog import Catalog, NotFound
from .comparisons import Comparisons
from .pages import STATUS_CHOICES, filters_from, matrix_page, page_number, page_of
from .runfile import RunFile

__all__ = ["LOCAL_HOSTS", "create_app"]

_MAX_TEXT = 100_000  # characters of one value shown (an output, a tool result)
# Plain symbols, not the reports' emoji: every browser's default fonts have these.
_ICONS = {"passed": "✓", "failed": "✗", "error": "!", "timeout": "⧖", "skipped": "–"}

HERE = Path(__file__).parent
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),  # results change under the viewer: never stale
]


def create_app(root: Path, *, hosts: Iterable[str] = LOCAL_HOSTS) -> Starlette:
    """The viewer of the results files under ``root``, answering requests for ``hosts``."""
    catalog = Catalog(root)
    viewer = _Viewer(catalog, Comparisons(catalog), _environment())
    routes = [
        Route("/", viewer.runs, methods=["GET"]),
        Route("/run", viewer.run, methods=["GET"]),
        Route("/case", viewer.case, methods=["GET"]),
        Route("/matrix", viewer.matrix, methods=["GET"]),
        Route("/compare", viewer.compare, methods=["GET"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(_SecurityHeaders),
            Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts)),
        ],
        exception_handlers={HTTPException: viewer.http_error},
    )


def _environment() -> SandboxedEnvironment:
    """The sandboxed, autoescaping Jinja2 environment of the viewer's templates."""
    env = SandboxedEnvironment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        duration=format_duration,
        percent=format_percent,
        text=_clipped_text,
        input=input_text,
        one_line=one_line,
        usd=format_usd,
        json=lambda value: to_json(value, indent=2),
        k=format_k,
        rate=summary_pass_rate,
        cost=lambda figures: cost_text(figures) if isinstance(figures, dict) else None,
        failure=failure_message,
    )
    env.globals.update(icons=_ICONS, status_choices=STATUS_CHOICES)
    return env


def _clipped_text(value: Any) -> str:
    """A value as text, cut at ``_MAX_TEXT`` characters (a page stays quick to open)."""
    text = value_text(value)
    if len(text) <= _MAX_TEXT:
        return text
    return text[:_MAX_TEXT] + f"\n… ({len(text) - _MAX_TEXT:,} more characters)"


class _Viewer:
    """The endpoints, over one catalog."""

    def __init__(self, catalog: Catalog, comparisons: Comparisons, env: SandboxedEnvironment):
        self.catalog = catalog
        self.comparisons = comparisons
        self.env = env

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        """A template rendered as a page."""
        page = self.env.get_template(template).render(root=str(self.catalog.root), **context)
        return HTMLResponse(page, status_code=status_code)

    def open(self, request: Request, key: str = "file") -> tuple[str, RunFile]:
        """The results file a query parameter names (404 for anything else)."""
        name = request.query_params.get(key, "")
        try:
            return name, self.catalog.open(name)
        except NotFound:
            raise HTTPException(404, f"no results file {name!r} here") from None

    def runs(self, request: Request) -> Response:
        """The runs list, newest first, with the form comparing two of them."""
        return self.render("runs.html", entries=self.catalog.entries())

    def run(self, request: Request) -> Response:
        """A run: summary, filters, search, one page of its results (failures first)."""
        name, run = self.open(request)
        filters = filters_from(request.query_params)
        page = self._safely(page_of, run, filters, page_number(request.query_params))
        others = [entry.path for entry in self.catalog.entries() if entry.path != name]
        return self.render(
            "run.html",
            name=name,
            run=run,
            filters=filters,
            page=page,
            others=others,
            connectors=header_connectors(run.header),
            names=header_names(run.header),  # an unfinished run's, from its header
            matrix=bool(header_connectors(run.header)) or any(row.connector for row in run.rows),
        )

    def case(self, request: Request) -> Response:
        """One result: input, output, assertions, tool calls, transcript, runs, usage."""
        name, run = self.open(request)
        text = request.query_params.get("n", "")
        if not text.isdigit() or int(text) >= len(run.rows):
            raise HTTPException(404, f"{name} has no result {text!r}")
        case = self._safely(case_page, run, run.rows[int(text)])
        return self.render("case.html", name=name, run=run, case=case)

    def matrix(self, request: Request) -> Response:
        """The connector matrix of a run: case × connector, each cell opening its result."""
        name, run = self.open(request)
        grid = matrix_page(run, page_number(request.query_params))
        if grid is None:
            raise HTTPException(404, f"{name} is not a connector matrix run")
        return self.render("matrix.html", name=name, run=run, grid=grid)

    def compare(self, request: Request) -> Response:
        """Two runs compared as ``agent diff`` compares them."""
        base = request.query_params.get("base", "")
        new = request.query_params.get("new", "")
        try:
            comparison = self._safely(self.comparisons.compare, base, new)
        except NotFound as missing:
            raise HTTPException(404, f"no results file {str(missing)!r} here") from None
        return self.render("compare.html", comparison=comparison, diff=comparison.diff)

    def _safely(self, build: Any, *args: Any) -> Any:
        """``build(*args)``; an error of ours (a file that changed or is damaged) is a 409
        page with its message."""
        try:
            return build(*args)
        except AgentCliError as error:
            raise HTTPException(409, str(error)) from None

    def http_error(self, request: Request, error: Exception) -> Response:
        """An error page (404, 405, 409) saying what was wrong."""
        assert isinstance(error, HTTPException)
        response = self.render(
            "error.html", status_code=error.status_code, code=error.status_code, detail=error.detail
        )
        if error.headers:
            response.headers.update(error.headers)
        return response


class _SecurityHeaders:
    """Adds the viewer's security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)
