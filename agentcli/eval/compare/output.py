"""Writing a ``RunDiff`` to a file whose extension picks the renderer (``.html``, ``.md``,
``.json``), checked before anything is read as ``agent report -o`` checks its file."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.eval.reports._files import (
    JSON_ERRORS,
    atomic_write_text,
    check_target,
    probe_writable,
    scrub_surrogates,
)

from .model import RunDiff

__all__ = ["DIFF_EXTENSIONS", "check_diff_output", "write_diff"]

# extension -> (module of this package, its render function, how its files begin)
_RENDERERS: dict[str, tuple[str, str, Callable[[str], bool]]] = {
    ".html": ("html", "render_html", lambda head: "<title>Agent Diff" in head),
    ".htm": ("html", "render_html", lambda head: "<title>Agent Diff" in head),
    ".md": ("markdown", "render_markdown", lambda head: head.startswith("# Agent diff")),
    ".markdown": ("markdown", "render_markdown", lambda head: head.startswith("# Agent diff")),
    ".json": ("json_form", "diff_json", lambda head: '"format": "agentcli.diff/' in head),
}
DIFF_EXTENSIONS = tuple(_RENDERERS)


def _renderer(path: Path) -> tuple[str, str, Callable[[str], bool]]:
    """The renderer of ``path``'s extension (``ConfigError`` for another)."""
    found = _RENDERERS.get(path.suffix.lower())
    if found is None:
        raise ConfigError(
            f"cannot write diff {path}: unknown extension {path.suffix!r}",
            hint="use one of " + ", ".join(DIFF_EXTENSIONS),
        )
    return found


def check_diff_output(path: Path, *, inputs: Iterable[Path], force: bool) -> None:
    """Refuse (exit 2) an output that is an input, an existing file that is not a diff of
    its format (unless ``force``), or a place that takes no file."""
    recognises = _renderer(path)[2]
    check_target(path, recognises=recognises, inputs=list(inputs), force=force)
    probe_writable(path)


def write_diff(diff: RunDiff, path: Path) -> None:
    """Render ``diff`` by ``path``'s extension and replace ``path`` atomically."""
    module, name, _ = _renderer(path)
    render: Callable[[RunDiff], str] = getattr(
        importlib.import_module(f"{__package__}.{module}"), name
    )
    text = render(diff)
    if path.suffix.lower() == ".json":
        atomic_write_text(path, text, errors=JSON_ERRORS)  # a lone surrogate: its JSON escape
    else:
        atomic_write_text(path, scrub_surrogates(text))
