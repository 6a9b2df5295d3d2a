"""The deployment example's server (examples/report_server.py) as examples/deploy runs it, in
real processes on a real redis-server: a replica in queue mode answers the plain call itself
and queues the report, which waits until a worker runs it; the caller gets the report
through the replica, and a bad section count gets a message saying what is allowed.
tests/project/test_deploy_containers.py runs the same in containers, where the report names
the worker's container."""

from __future__ import annotations

import socket

import pytest

from tests.support.httpserve import ROOT, toolwire_http
from tests.support.redisserve import redis_server
from tests.tasks.test_workers import ERAS, worker
from toolwire.client import Client

REPORTS = str(ROOT / "examples" / "report_server.py")


@pytest.mark.parametrize("era", ERAS)
async def test_the_replica_queues_the_report_and_a_worker_builds_it(era: str) -> None:
    with redis_server() as redis, toolwire_http(REPORTS, "--redis", redis, "--queue", redis) as (url, _):
        async with Client(url, protocol=era) as client:
            assert (await client.call_tool("host")).text == socket.gethostname()
            handle = await client.start_task("build_report", {"month": "2026-11", "sections": 2})
            assert handle.id is not None
            assert (await handle.refresh()).status == "working"  # queued: no worker runs it yet
            with worker(redis, file=REPORTS):
                report = (await handle.result()).text
                too_long = await client.start_task("build_report", {"month": "2026-11", "sections": 50})
                assert too_long.id is not None
                wrong = await too_long.result()
    assert report == f"Report for 2026-11: 2 sections, built on {socket.gethostname()}"
    assert wrong.is_error and "sections must be between 1 and 20, not 50" in wrong.text
