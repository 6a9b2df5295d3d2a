"""``echo_server.py``'s server with guards on, for ``benchmarks/guards_run.py``:
a timeout, an in-memory rate limit (high enough never to refuse) and the audit trail in a
file flushed per record (``$BENCH_AUDIT_FILE``)."""

from __future__ import annotations

import os

from echo_server import server

from toolwire.guards import Audit, FileSink, Limits, RateLimit

server.use(Limits(timeout=30.0))
server.use(RateLimit(1_000_000, burst=1_000_000))
server.use(Audit(FileSink(os.environ["BENCH_AUDIT_FILE"], durability="flush")))
