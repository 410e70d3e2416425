"""``python -m agentcli``."""

from agentcli.cli.main import main

main()
