"""A small real MCP server for the weather example, built on the official `mcp` SDK.

The forecasts are fake and deterministic (derived from the city name), so tests and offline
evals always see the same numbers. Run it by hand with ``python mcps/server.py`` (stdio), or
``python mcps/server.py --http 8000`` / ``--sse 8000`` to serve it on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import zlib
from typing import TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

CITIES = ("Berlin", "London", "Paris", "Tokyo")
CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "snowy")

server = MCPServer("weather", log_level="WARNING")


class Day(TypedDict):
    day: int
    condition: str
    high_c: int
    low_c: int


class Forecast(TypedDict):
    city: str
    days: list[Day]
    summary: str


class Cities(TypedDict):
    cities: list[str]


def _known(city: str) -> str:
    for known in CITIES:
        if known.lower() == city.strip().lower():
            return known
    raise ToolError(f"unknown city {city!r}; try one of: {', '.join(CITIES)}")


@server.tool()
def get_forecast(city: str, days: int = 1) -> Forecast:
    """Get the weather forecast for a city, for 1 to 7 days."""
    name = _known(city)
    if not 1 <= days <= 7:
        raise ToolError("days must be between 1 and 7")
    seed = zlib.crc32(name.encode())
    forecast = [
        Day(
            day=i + 1,
            condition=CONDITIONS[(seed + i) % len(CONDITIONS)],
            high_c=12 + (seed + 3 * i) % 15,
            low_c=2 + (seed + 3 * i) % 10,
        )
        for i in range(days)
    ]
    first = forecast[0]
    summary = f"{first['condition']}, {first['low_c']} to {first['high_c']} °C"
    return Forecast(city=name, days=forecast, summary=summary)


@server.tool()
def list_cities() -> Cities:
    """List the cities a forecast is available for."""
    return Cities(cities=list(CITIES))


def main() -> None:
    """Serve over stdio, or over HTTP/SSE on 127.0.0.1 when a port is given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP at /mcp")
    group.add_argument("--sse", type=int, metavar="PORT", help="serve SSE at /sse")
    options = parser.parse_args()
    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    elif options.sse:
        server.run("sse", host="127.0.0.1", port=options.sse)
    else:
        server.run()


if __name__ == "__main__":
    main()
