"""The `agent` command line (Typer); nothing below imports it."""
