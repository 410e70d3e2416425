"""Which of agentcli's own modules one ``agent`` command line imports (run in a fresh
interpreter, so nothing this test process loaded counts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
prefix = sys.argv[2]
sys.argv = ["agent", *json.loads(sys.argv[1])]
from agentcli.cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stdout = sys.__stdout__
print("\\nLOADED=" + json.dumps(sorted(m for m in sys.modules if m.startswith(prefix))))
"""


def modules_after(args: list[str], cwd: Path, prefix: str) -> list[str]:
    """The modules named ``prefix...`` that ``agent <args>`` run in ``cwd`` imports."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), prefix],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "AGENTCLI_HOME": str(cwd / "home")},
    )
    marker = completed.stdout.rsplit("LOADED=", 1)
    assert len(marker) == 2, completed.stdout + completed.stderr
    return json.loads(marker[1])
