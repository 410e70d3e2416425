"""Loading user Python files (hooks, tools, python: models, eval scripts) from a package's
``src/`` folder, each under a module name unique to its path so two packages' ``tools.py``
never collide and a file reached by several routes is executed once."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from agentcli.errors import PackageError

__all__ = ["load_source_module"]


def load_source_module(path: Path, dotted: str) -> ModuleType:
    """Import ``path`` (named ``dotted`` under ``src/``) once; syntax and import errors become
    a ``PackageError`` naming the file (and line)."""
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    unique = f"_agentcli_src_{digest}_{dotted.replace('.', '_').replace('-', '_')}"
    loaded = sys.modules.get(unique)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(unique, resolved)
    assert spec is not None and spec.loader is not None  # a .py path always has a loader
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[unique] = loaded
    try:
        spec.loader.exec_module(loaded)
    except SyntaxError as error:
        sys.modules.pop(unique, None)
        raise PackageError(
            f"syntax error: {error.msg}", path=str(resolved), line=error.lineno
        ) from None
    except Exception as error:
        sys.modules.pop(unique, None)
        raise PackageError(
            f"importing failed: {type(error).__name__}: {error}", path=str(resolved)
        ) from error
    return loaded
