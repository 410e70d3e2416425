"""Yao's PascalCase names as aliases of the Python ones: ``ctx.memory.user.Get`` is
``ctx.memory.user.get``, ``ctx.mcp.CallToolsParallel`` is ``call_tools_parallel``, so hooks
ported from TypeScript read the same. Only names that are not found otherwise are looked up
(``__getattr__``), so the Python names cost nothing extra."""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["PascalAliases", "snake_name"]

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@functools.lru_cache(maxsize=512)
def snake_name(name: str) -> str:
    """``CallToolsParallel`` -> ``call_tools_parallel``; ``JSONPath`` -> ``json_path``."""
    return _BOUNDARY.sub("_", name).lower()


class PascalAliases:
    """Mixin: an unknown PascalCase attribute resolves to its snake_case twin (or, for
    Yao names written as one word such as ``GetDel``, to the lower-cased name)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name[:1].isupper():
            for candidate in dict.fromkeys((snake_name(name), name.lower())):
                try:
                    return object.__getattribute__(self, candidate)
                except AttributeError:
                    continue
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
