"""Results files named by URL (``s3://bucket/run/shard-*.jsonl``), read through fsspec.

fsspec is the filesystem layer of the Python data ecosystem (pandas, dask, Ray read through
it); a protocol's own package (``s3fs``, ``gcsfs``, ``adlfs``) adds that store. It is imported
only when an input is a URL, so local merges never load it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.results.reader import LoadedReport, parse_results, read_results

__all__ = ["expand_inputs", "is_url", "read_any"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_GLOB = re.compile(r"[*?\[]")


def is_url(name: str | Path) -> bool:
    """True for ``scheme://...`` names (a local path never has one)."""
    return isinstance(name, str) and _URL.match(name) is not None


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path within it."""
    import fsspec.core

    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # e.g. "Install s3fs to access S3"
        raise ConfigError(
            f"{url}: cannot open this URL: {exc}",
            hint="install the package of that store (s3fs for s3://, gcsfs for gs://)",
        ) from None
    return fs, path


def expand_inputs(names: Sequence[str]) -> list[str | Path]:
    """Local paths as ``Path``; URLs as given, a URL with ``*``/``?``/``[`` expanded (sorted)."""
    inputs: list[str | Path] = []
    for name in names:
        if not is_url(name):
            inputs.append(Path(name))
            continue
        if not _GLOB.search(name.split("://", 1)[1]):
            inputs.append(name)
            continue
        fs, pattern = _filesystem(name)
        matches = sorted(fs.glob(pattern))
        if not matches:
            raise ConfigError(f"{name}: no results files match this pattern")
        inputs.extend(str(fs.unstrip_protocol(match)) for match in matches)
    return inputs


def read_any(source: str | Path) -> LoadedReport:
    """Read a results file from a local path or a URL."""
    if not is_url(source):
        return read_results(Path(source))
    url = str(source)
    fs, path = _filesystem(url)
    try:
        with fs.open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise CaseFileError(f"{url}: no such results file") from None
    except OSError as exc:
        raise CaseFileError(f"{url}: cannot read: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{url}: not a UTF-8 text file ({exc.reason})") from None
    return parse_results(url, text)
