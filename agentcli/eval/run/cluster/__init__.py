"""``agent eval --executor ray``: cases run as tasks on a Ray cluster.

``driver`` connects to the cluster, ships the package (Ray's runtime environment) and is
the runner's ``CaseDispatcher``: it submits one task per case and turns what comes back
into the typed result; the runner in this process keeps scheduling, ordering, retries,
fail-fast, interrupts and the results file. ``worker`` is the task's side: it rebuilds the
registry once per worker process and runs the same executors as a local run. ``budget``
is the actor that makes each connector's concurrency limit hold across the cluster.
Nothing here imports Ray at import time: only ``--executor ray`` loads it.
"""
