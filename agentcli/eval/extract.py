"""``agent extract``: one file per case (Markdown or JSON) plus an ``index.md`` linking them.

Case ids become file names only after sanitising: no separators, no ``..``, no control
characters, no reserved Windows names, a length cap; collisions (compared without case,
as on macOS and Windows) get ``-2``, ``-3``... in file order, and every path is checked to
resolve inside the output folder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agentcli.errors import ConfigError

from .reports._view import (
    STATUS_ICONS,
    format_duration,
    format_percent,
    runs_by_id,
    stability_view,
    status_of,
    to_json,
)
from .reports.markdown_case import (
    STABILITY_ICONS,
    case_markdown,
    code,
    escape,
    stability_markdown,
    table,
)
from .reports.reader import read_results

__all__ = ["FORMATS", "extract", "safe_file_stem"]

FORMATS = {"markdown": ".md", "json": ".json"}

_MAX_STEM_BYTES = 120  # well under the 255-byte name limit, leaving room for "-NN.json"
_UNSAFE = re.compile(r'[<>:"/\\|?*]')
_DOTS = re.compile(r"\.{2,}")
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$", re.IGNORECASE)


def _visible(ch: str) -> str:
    """Control characters become spaces; invisible format characters (bidi overrides) vanish."""
    category = unicodedata.category(ch)
    if category == "Cc":
        return " "
    return "" if category in ("Cf", "Cs", "Co") else ch


def safe_file_stem(raw: Any) -> str:
    """A file name stem for a case id that is safe on Linux, macOS and Windows."""
    text = "".join(_visible(ch) for ch in unicodedata.normalize("NFC", str(raw)))
    text = _DOTS.sub(".", _UNSAFE.sub("_", " ".join(text.split()))).strip(" .")
    if _WINDOWS_RESERVED.match(text.split(".")[0].strip()):
        text = "_" + text
    encoded = text.encode("utf-8")
    if len(encoded) > _MAX_STEM_BYTES:
        text = encoded[:_MAX_STEM_BYTES].decode("utf-8", errors="ignore").rstrip(" .")
    return text or "case"


class _Names:
    """Hands out distinct, safe file names inside one folder."""

    def __init__(self, folder: Path, reserved: set[str]) -> None:
        self.folder = folder.resolve()
        self.used = {name.casefold() for name in reserved}

    def path_for(self, raw_id: Any, suffix: str) -> Path:
        """A new path ``<folder>/<safe id>[-N]<suffix>`` that no earlier call returned."""
        stem = safe_file_stem(raw_id)
        name, counter = stem + suffix, 1
        while name.casefold() in self.used:
            counter += 1
            name = f"{stem}-{counter}{suffix}"
        self.used.add(name.casefold())
        return self.inside(name)

    def inside(self, name: str) -> Path:
        """``<folder>/<name>``, refused if it resolves anywhere else."""
        path = (self.folder / name).resolve()
        if path.parent != self.folder:
            # Only a symlink planted in the output folder can get here.
            raise ConfigError(f"refusing to write {name}: it resolves outside {self.folder}")
        return path


def _write(path: Path, text: str) -> None:
    """Write one extracted file, turning OS failures into a clear error."""
    try:
        path.write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _index(
    source: Path, rows: list[list[str]], summary: dict[str, Any] | None, warnings: list[str]
) -> str:
    """The index document linking every extracted file."""
    parts = ["# Extracted cases", f"Source: {code(str(source))}"]
    parts += [f"> ⚠️ {escape(warning)}" for warning in warnings]
    if summary:
        counts = ", ".join(
            f"{summary[k]} {k}"
            for k in ("total", "passed", "failed", "errors", "timeouts", "skipped")
            if isinstance(summary.get(k), int)
        )
        parts.append(escape(counts))
    parts.append(table(["ID", "Status", "Duration", "File"], rows) if rows else "_No cases._")
    return "\n\n".join(parts) + "\n"


def _link(path: Path) -> str:
    """A relative Markdown link to an extracted file."""
    return f"[{escape(path.name)}]({quote(path.name)})"


def extract(
    path: Path,
    out_dir: Path,
    fmt: str = "markdown",
    *,
    on_warning: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write one file per case of the results file ``path`` into ``out_dir``; return them.

    What the reader tolerated (a torn last line, a missing summary) goes to ``on_warning``
    and into the index."""
    suffix = FORMATS.get(fmt)
    if suffix is None:
        raise ConfigError(f"unknown extract format {fmt!r}", hint="use markdown or json")
    loaded = read_results(path)
    for warning in loaded.warnings:
        if on_warning is not None:
            on_warning(warning)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {out_dir}: {exc.strerror or exc}") from exc
    names = _Names(out_dir, reserved={"index.md"})
    stable_ids = {str(s.get("id")) for s in loaded.stability_results}
    written: list[Path] = []
    rows: list[list[str]] = []
    for result in loaded.results:
        if str(result.get("id")) in stable_ids and result.get("run") is not None:
            continue  # written inside its stability file
        raw_id = result.get("id", "")
        label = raw_id if result.get("run") is None else f"{raw_id}-run-{result['run']}"
        target = names.path_for(label, suffix)
        body = (
            to_json(result, indent=2) + "\n"
            if fmt == "json"
            else case_markdown(result, raw_output=True)
        )
        _write(target, body)
        written.append(target)
        status = status_of(result)
        rows.append(
            [
                code(label, in_table=True),
                f"{STATUS_ICONS[status]} {status}",
                format_duration(result.get("duration_ms")),
                _link(target),
            ]
        )
    runs_of = runs_by_id(loaded.results)
    for item in loaded.stability_results:
        view = stability_view(item)
        runs = runs_of.get(view.id, [])
        target = names.path_for(view.id, suffix)
        if fmt == "json":
            body = to_json({"stability": item, "runs": runs}, indent=2) + "\n"
        else:
            body = stability_markdown(view, runs)
        _write(target, body)
        written.append(target)
        icon = STABILITY_ICONS.get(view.label, "📊")
        rows.append(
            [
                code(view.id, in_table=True),
                f"{icon} {escape(view.label)} ({format_percent(view.rate)})",
                format_duration(view.durations.get("avg")),
                _link(target),
            ]
        )
    index = names.inside("index.md")
    _write(index, _index(path, rows, loaded.summary, loaded.warnings))
    written.append(index)
    return written
