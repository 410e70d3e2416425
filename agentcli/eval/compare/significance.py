"""Whether a change in a case's repeat counts is more than noise: Fisher's exact test.

Each side of a case under ``--runs`` is a count of passing and failing runs; the 2x2 table
``[[base passed, base failed], [new passed, new failed]]`` is tested two-sided (the change
may go either way: a regression or a fix). Fisher's test is exact at the small counts repeats
give (5 runs a side), where a chi-squared approximation is not; a binomial test would treat
the base rate as known, which at 5 runs it is not. scipy computes it; it is imported here,
when the first case with repeats is compared, because its import costs ~0.8 s.
"""

from __future__ import annotations

from .model import Significance

__all__ = ["FISHER", "fisher_test"]

FISHER = "Fisher's exact test (two-sided)"


def fisher_test(
    base_passed: int, base_failed: int, new_passed: int, new_failed: int, *, alpha: float
) -> Significance:
    """The two-sided Fisher exact test of the two sides' pass/fail counts."""
    import numpy as np  # scipy's own dependency
    from scipy.stats import fisher_exact

    table = np.array([[base_passed, base_failed], [new_passed, new_failed]])
    result = fisher_exact(table, alternative="two-sided")
    p_value = min(1.0, float(result.pvalue))  # floating sums may overshoot 1 by an ulp
    return Significance(FISHER, p_value, alpha)
