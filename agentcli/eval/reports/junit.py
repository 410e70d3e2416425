"""JUnit XML for CI dashboards: one testcase per result (per run under ``--runs``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from agentcli.eval.results.model import CaseResult, RunReport, cell_label

from ._buffered import BufferedWriter
from ._view import comparison, failure_message, value_text

__all__ = ["JunitWriter", "render_junit"]

# XML 1.0 allows only these characters; anything else (NUL, most C0 controls, lone
# surrogates, U+FFFE/FFFF) makes the file unreadable, so it becomes U+FFFD: visible, legal.
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: Any) -> str:
    """Text safe for an XML document."""
    return _ILLEGAL_XML.sub("\ufffd", str(text))


def _seconds(ms: Any) -> str:
    """Milliseconds as JUnit's seconds with three decimals."""
    number = ms if isinstance(ms, int | float) and not isinstance(ms, bool) else 0
    return f"{number / 1000:.3f}"


def _details(result: CaseResult) -> str:
    """The body of a failure/error element: the error and every failed assertion."""
    lines = [result.error] if result.error else []
    for item in result.assertions:
        if not item.passed:
            lines.append(f"[{item.type or 'assertion'}] {item.message or 'failed'}")
            lines.extend(f"    {label}: {text}" for label, text in comparison(item, result))
    return "\n".join(lines)


def _testcase(result: CaseResult, classname: str) -> ET.Element:
    """One ``<testcase>`` with its outcome element and the output as system-out."""
    name = cell_label(result.id, result.connector)
    if result.run is not None:
        name += f" run {result.run}"
    case = ET.Element(
        "testcase",
        {
            "classname": _clean(classname),
            "name": _clean(name),
            "time": _seconds(result.duration_ms),
        },
    )
    status = result.status
    message = _clean(failure_message(result))
    if status == "failed":
        outcome = ET.SubElement(case, "failure", {"message": message, "type": "assertion"})
        outcome.text = _clean(_details(result))
    elif status in ("error", "timeout"):
        outcome = ET.SubElement(case, "error", {"message": message, "type": status})
        outcome.text = _clean(_details(result))
    elif status == "skipped":
        ET.SubElement(case, "skipped", {"message": message} if message else {})
    if result.output is not None:
        ET.SubElement(case, "system-out").text = _clean(value_text(result.output))
    return case


def render_junit(report: RunReport) -> str:
    """The report as a JUnit XML document (``<testsuites>`` with one ``<testsuite>``)."""
    summary, results = report.summary, report.results
    agent = summary.agent_id or "agent"
    statuses = [r.status for r in results]
    counts = {
        "tests": str(len(results)),
        "failures": str(statuses.count("failed")),
        "errors": str(statuses.count("error") + statuses.count("timeout")),
        "skipped": str(statuses.count("skipped")),
        "time": _seconds(summary.duration_ms),
    }
    # <testsuites> takes no "skipped" attribute in the schema CI dashboards validate against
    totals = {k: v for k, v in counts.items() if k != "skipped"}
    root = ET.Element("testsuites", {"name": _clean(agent), **totals})
    suite_attrs = {"name": _clean(agent), **counts}
    started = report.header.metadata.get("started_at")
    if started:
        suite_attrs["timestamp"] = _clean(started)
    suite = ET.SubElement(root, "testsuite", suite_attrs)
    suite.extend(_testcase(result, agent) for result in results)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class JunitWriter(BufferedWriter):
    """Writes the JUnit XML report at close."""

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` starts a JUnit document (any tool's: it is a report too)."""
        return head.lstrip().startswith("<?xml") and "<testsuites" in head

    def render(self, report: RunReport) -> str:
        """The report as JUnit XML."""
        return render_junit(report)
