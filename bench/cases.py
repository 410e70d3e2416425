"""Generated workloads for the benches: N echo cases, a package that answers with echo."""

from __future__ import annotations

import json
from pathlib import Path


def echo_package(folder: Path, connector: str = "echo") -> Path:
    """A minimal assistant package answering through ``connector``."""
    package = folder / "assistants" / "bench"
    package.mkdir(parents=True, exist_ok=True)
    (package / "package.yao").write_text(json.dumps({"name": "Bench", "connector": connector}))
    return package


def echo_cases(path: Path, count: int) -> Path:
    """``count`` cases ``case <i>: say hello`` with one ``contains`` assertion."""
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            case = {
                "id": f"c{index}",
                "input": f"case {index}: say hello",
                "assert": {"type": "contains", "value": "hello"},
            }
            handle.write(json.dumps(case) + "\n")
    return path
