"""Results: the typed values of a run, merging results files, extracting cases from them."""
