"""Comparing two runs: ``agent diff`` and the ``--baseline`` gate of ``agent eval``.

Two lists of typed ``CaseResult`` (as the results reader gives them) become one typed
``RunDiff`` (``compute.diff_runs``): a ``CaseChange`` per case id saying what became of
it (regression, fix, still failing, ...), with the significance test of its repeat counts
under ``--runs``, its output diff, tool-call and metric changes. Renderers are separate and
fed only that value: console lines (``console``), the JSON document (``json_form``),
Markdown (``markdown``) and self-contained HTML (``html``).

Kept light: nothing here is imported by ``agent --help``; scipy is imported only when a
case has repeats to test (``significance``).
"""
