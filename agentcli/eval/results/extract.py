"""``agent extract``: one file per case (Markdown or JSON) plus an ``index.md`` linking them.

Case ids become file names only after sanitising: no separators, no ``..``, no control
characters, no reserved Windows names, a length cap; collisions (compared without case,
as on macOS and Windows) get ``-2``, ``-3``... in file order, and every path is checked to
resolve inside the output folder. A name that is the results file being read is skipped
too, so extracting into its own folder cannot overwrite it.

The folder is checked before the first file (exit 2); a file that cannot be written after
that (a full disk) is an ``OutputError`` (exit 1) saying how many were written. Markdown
has lone surrogates replaced by U+FFFD; JSON writes them as their JSON escape.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agentcli.errors import ConfigError, OutputError
from agentcli.eval.reports._files import (
    JSON_ERRORS,
    explain,
    probe_writable,
    same_file,
    scrub_surrogates,
)
from agentcli.eval.reports._view import (
    STATUS_ICONS,
    format_duration,
    format_percent,
    runs_by_id,
    stability_view,
)
from agentcli.eval.reports.markdown_case import (
    STABILITY_ICONS,
    case_markdown,
    code,
    escape,
    stability_markdown,
    table,
)
from agentcli.eval.results.codec import result_dict, to_json
from agentcli.eval.results.model import RunSummary, cell_label
from agentcli.eval.results.reader import read_results
from agentcli.words import counted

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

    def __init__(self, folder: Path, reserved: set[str], protected: Path | None = None) -> None:
        self.folder = folder.resolve()
        self.used = {name.casefold() for name in reserved}
        self.protected = protected  # the results file being read: never a target

    def path_for(self, raw_id: Any, suffix: str) -> Path:
        """A new path ``<folder>/<safe id>[-N]<suffix>`` that no earlier call returned."""
        stem = safe_file_stem(raw_id)
        name, counter = stem + suffix, 1
        while name.casefold() in self.used or self._protects(name):
            counter += 1
            name = f"{stem}-{counter}{suffix}"
        self.used.add(name.casefold())
        return self.inside(name)

    def _protects(self, name: str) -> bool:
        """True when ``name`` in the folder is the protected file."""
        return self.protected is not None and same_file(self.folder / name, self.protected)

    def inside(self, name: str) -> Path:
        """``<folder>/<name>``, refused if it resolves anywhere else."""
        path = (self.folder / name).resolve()
        if path.parent != self.folder:
            # Only a symlink planted in the output folder can get here.
            raise ConfigError(f"refusing to write {name}: it resolves outside {self.folder}")
        return path


def _write(path: Path, text: str, written: list[Path], *, as_json: bool = False) -> None:
    """Write one extracted file (and list it in ``written``); a failure says what was kept."""
    try:
        if as_json:
            path.write_text(text, encoding="utf-8", errors=JSON_ERRORS, newline="\n")
        else:
            path.write_text(scrub_surrogates(text), encoding="utf-8", newline="\n")
    except OSError as exc:
        what, todo = explain(exc)
        raise OutputError(
            f"cannot write {path}: {what}; {counted(len(written), 'file')} {'was' if len(written) == 1 else 'were'} written to "
            f"{path.parent} before it (the results file is unchanged)",
            hint=f"{todo}, then run agent extract again",
        ) from exc
    written.append(path)


# Each count of the index, with its word for one ("1 error", "2 errors").
_COUNT_WORDS = (
    ("total", "total"),
    ("passed", "passed"),
    ("failed", "failed"),
    ("errors", "error"),
    ("timeouts", "timeout"),
    ("skipped", "skipped"),
)


def _index(
    source: Path, rows: list[list[str]], summary: RunSummary | None, warnings: list[str]
) -> str:
    """The index document linking every extracted file."""
    parts = ["# Extracted cases", f"Source: {code(str(source))}"]
    parts += [f"> ⚠️ {escape(warning)}" for warning in warnings]
    if summary is not None:
        counts = ", ".join(
            f"{getattr(summary, key)} {key if getattr(summary, key) != 1 else one}"
            for key, one in _COUNT_WORDS
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
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(
            f"cannot extract into {out_dir}: it is a file, not a folder",
            hint="name a folder with -o",
        )
    if same_file(out_dir / "index.md", path):  # the other names avoid it (_Names); not the index
        raise ConfigError(
            f"cannot extract into {out_dir}: its index.md is the results file {path}, "
            "which writing the index would destroy",
            hint="name another folder with -o",
        )
    probe_writable(out_dir / "index.md")  # creates the folder; exit 2 before any file
    names = _Names(out_dir, reserved={"index.md"}, protected=path)
    stable_ids = {str(s.get("id")) for s in loaded.stability_results}
    written: list[Path] = []
    rows: list[list[str]] = []
    for result in loaded.results:
        if result.id in stable_ids and result.run is not None:
            continue  # written inside its stability file
        name = cell_label(result.id, result.connector)  # a matrix's: one file per cell
        label = name if result.run is None else f"{name}-run-{result.run}"
        target = names.path_for(label, suffix)
        body = (
            to_json(result_dict(result), indent=2) + "\n"
            if fmt == "json"
            else case_markdown(result, raw_output=True)
        )
        _write(target, body, written, as_json=fmt == "json")
        rows.append(
            [
                code(label, in_table=True),
                f"{STATUS_ICONS[result.status]} {result.status}",
                format_duration(result.duration_ms),
                _link(target),
            ]
        )
    runs_of = runs_by_id(loaded.results)
    for item in loaded.stability_results:
        view = stability_view(item)
        runs = runs_of.get(view.id, [])
        target = names.path_for(view.id, suffix)
        if fmt == "json":
            record = {"stability": item, "runs": [result_dict(run) for run in runs]}
            body = to_json(record, indent=2) + "\n"
        else:
            body = stability_markdown(view, runs)
        _write(target, body, written, as_json=fmt == "json")
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
    _write(index, _index(path, rows, loaded.summary, loaded.warnings), written)
    return written
