"""Statistics over runs: stability (pass rates, intervals, pass@k, durations)."""
