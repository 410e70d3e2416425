"""The connector matrix table at a fixed width, exact text: statuses, pass rates under
--runs, the verdict by --matrix-pass, the narrow-terminal listing, and a long suite cut."""

from __future__ import annotations

from agentcli.cli.views.matrix_table import MAX_ROWS, MatrixTable
from agentcli.eval.results.matrix import Matrix, MatrixPass
from agentcli.eval.results.model import CaseResult, Status
from tests.cli.views.blocks import rendered

COLUMNS = ["scripted:a.yml", "scripted:b.yml", "loop"]


def grid(rows: dict[str, list[Status | list[Status]]], *, runs: int = 1) -> Matrix:
    """A grid of ``rows``: per case, each column's status (or statuses under --runs)."""
    matrix = Matrix(list(COLUMNS), runs_per_case=runs)
    for case_id, cells in rows.items():
        for connector, statuses in zip(COLUMNS, cells, strict=True):
            for run, status in enumerate([statuses] if isinstance(statuses, str) else statuses, 1):
                result = CaseResult(case_id, status, run=run if runs > 1 else None)
                result.connector = connector
                matrix.add(result)
    return matrix


def table(matrix: Matrix, mode: MatrixPass = "all", width: int = 80, rate: float = 100) -> str:
    return rendered(MatrixTable(matrix, mode, rate, width=width), width=width)


def test_the_table_shows_each_cell_the_verdict_and_the_cells_passed_per_connector():
    matrix = grid({"greet": ["passed", "failed", "passed"], "bye": ["passed"] * 3})
    assert table(matrix) == (
        "\n"
        "  Matrix: 2 test cases × 3 connectors (a case passes on every connector)\n"
        "  Case    scripted:a.yml  scripted:b.yml  loop    Verdict\n"
        "  greet   PASSED          FAILED          PASSED  FAILED\n"
        "  bye     PASSED          PASSED          PASSED  PASSED\n"
        "  Passed  2/2             1/2             2/2     1/2\n"
    )


def test_with_matrix_pass_any_one_passing_connector_passes_the_case():
    matrix = grid({"greet": ["error", "failed", "passed"], "never": ["failed"] * 3})
    assert table(matrix, "any") == (
        "\n"
        "  Matrix: 2 test cases × 3 connectors (a case passes on any connector)\n"
        "  Case    scripted:a.yml  scripted:b.yml  loop    Verdict\n"
        "  greet   ERROR           FAILED          PASSED  PASSED\n"
        "  never   FAILED          FAILED          FAILED  FAILED\n"
        "  Passed  0/2             0/2             1/2     1/2\n"
    )


def test_under_runs_a_cell_shows_its_pass_rate_against_the_threshold():
    three = ["passed", "passed", "passed"]
    flaky: list[Status] = ["passed", "failed", "passed"]
    matrix = grid({"flip": [three, flaky, ["failed"] * 3]}, runs=3)
    assert table(matrix) == (
        "\n"
        "  Matrix: 1 test case × 3 connectors (a case passes on every connector)\n"
        "  Case    scripted:a.yml  scripted:b.yml  loop        Verdict\n"
        "  flip    ✓ 100% (3/3)    ✗ 67% (2/3)     ✗ 0% (0/3)  FAILED\n"
        "  Passed  1/1             0/1             0/1         0/1\n"
    )
    # --min-pass-rate 60: two of three runs are enough
    assert "✓ 67% (2/3)" in table(matrix, rate=60)


def test_a_narrow_terminal_gets_the_cases_one_by_one():
    matrix = grid({"greet": ["passed", "failed", "passed"]})
    assert table(matrix, width=40) == (
        "\n"
        "  Matrix: 1 test case × 3 connectors\n"
        "  (a case passes on every connector)\n"
        "  [greet] FAILED\n"
        "    scripted:a.yml  PASSED\n"
        "    scripted:b.yml  FAILED\n"
        "    loop            PASSED\n"
        "  Passed:\n"
        "    scripted:a.yml  1/1\n"
        "    scripted:b.yml  0/1\n"
        "    loop            1/1\n"
        "    Verdict         0/1\n"
    )


def test_long_ids_and_names_are_cut_and_a_missing_cell_is_a_dash():
    matrix = Matrix(["a-very-long-connector-name-indeed", "b"])
    for connector, status in (("a-very-long-connector-name-indeed", "passed"),):
        result = CaseResult("an-extraordinarily-long-case-identifier", status)  # type: ignore[arg-type]
        result.connector = connector
        matrix.add(result)
    lines = table(matrix).splitlines()
    assert lines[2] == "  Case                      a-very-long-connect…  b    Verdict"
    assert lines[3] == "  an-extraordinarily-long…  PASSED                -    PASSED"
    assert lines[4] == "  Passed                    1/1                   0/0  1/1"


def test_a_long_suite_shows_the_cases_that_did_not_pass_everywhere_and_counts_the_rest():
    rows: dict[str, list[Status | list[Status]]] = {f"ok{i}": ["passed"] * 3 for i in range(50)}
    rows["bad"] = ["passed", "failed", "passed"]
    text = table(grid(rows))
    assert "  bad     PASSED          FAILED          PASSED  FAILED\n" in text
    assert "ok1 " not in text
    assert text.splitlines()[-1] == "  … 50 more test cases passed on every connector"
    many = {f"bad{i}": ["failed", "passed", "passed"] for i in range(MAX_ROWS + 5)}
    lines = table(grid(many)).splitlines()  # type: ignore[arg-type]
    assert len(lines) == 2 + 1 + MAX_ROWS + 1 + 1  # blank and title, head, rows, totals, count
    assert lines[-1] == "  … 5 more test cases with a cell that did not pass: see -o report.html"
