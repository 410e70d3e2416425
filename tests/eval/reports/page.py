"""Reading the HTML report's embedded data back, as its script does (for tests)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["report_data", "row_of"]


def report_data(page: str) -> dict[str, Any]:
    """The report's data, its shared strings put back (as report.js reads it)."""
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert match is not None
    data = json.loads(match.group(1))
    strings = data.pop("strings")

    def decode(value: Any) -> Any:
        if isinstance(value, list):
            return [decode(item) for item in value]
        if isinstance(value, dict):
            if "$o" in value:
                return {key: decode(item) for key, item in value["$o"].items()}
            if "$" in value:
                return strings[value["$"]]
            return {key: decode(item) for key, item in value.items()}
        return value

    return decode(data)


def row_of(data: dict[str, Any], case_id: str) -> tuple[list[Any], dict[str, Any] | None]:
    """A case's row and its page (None for a passed or skipped case: the row is all)."""
    row = next(row for row in data["cases"] if row[1] == case_id)
    detail = row[7] if len(row) > 7 else None  # trailing empty fields are left out
    return row, None if detail is None else data["details"][detail]
