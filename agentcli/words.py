"""Words for numbers in messages: ``1 case``, ``3 cases``."""

from __future__ import annotations

__all__ = ["counted"]


def counted(number: int, noun: str) -> str:
    """``1 test case``, ``3 test cases``, ``1,200 runs`` (regular plurals only)."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"
