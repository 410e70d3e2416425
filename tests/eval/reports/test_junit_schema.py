"""The JUnit report validates against the JUnit schema CI dashboards read (fixtures/schemas)."""

from __future__ import annotations

from pathlib import Path

import xmlschema

from agentcli.eval.reports.junit import render_junit
from agentcli.eval.results.model import RunReport
from agentcli.eval.results.reader import read_document

SCHEMA = xmlschema.XMLSchema(
    Path(__file__).resolve().parents[3] / "fixtures" / "schemas" / "junit.xsd"
)


def report(results: list[dict]) -> RunReport:
    return read_document(
        {
            "summary": {"agent_id": "probe", "duration_ms": 1234.5},
            "metadata": {"started_at": "2026-11-30T10:00:00+00:00"},
            "results": results,
        }
    ).report()


def test_every_status_validates():
    results = [
        {"id": "ok", "status": "passed", "duration_ms": 12.5, "output": "fine"},
        {
            "id": "bad",
            "status": "failed",
            "duration_ms": 3,
            "error": 'expected "x"',
            "output": {"a": 1},
        },
        {"id": "err", "status": "error", "duration_ms": 1, "error": "model exploded"},
        {"id": "slow", "status": "timeout", "duration_ms": 300000, "error": "timed out after 300s"},
        {"id": "skip", "status": "skipped", "duration_ms": 0},
        {"id": "stab", "status": "passed", "duration_ms": 5, "run": 2, "output": "ctrl \x01 char"},
        {"id": "<&>\"'", "status": "passed", "duration_ms": 5, "output": "日本語 ✓"},
    ]
    xml = render_junit(report(results))
    SCHEMA.validate(xml)
    assert SCHEMA.is_valid(xml)


def test_the_schema_rejects_what_dashboards_reject():
    assert not SCHEMA.is_valid('<testsuites><testsuite name="x"/></testsuites>')  # no counts
    assert not SCHEMA.is_valid('<testsuites skipped="1"/>')


def test_empty_report_validates():
    SCHEMA.validate(render_junit(report([])))
