"""Replicas behind a load balancer: three ``toolwire run --http --redis`` processes behind a real
``haproxy`` (round robin, no stickiness) sharing a real ``redis-server``. On the 2026-07-28
wire every request may land on another replica: calls, the rounds of a question, tasks
polled, answered and cancelled anywhere."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.httpserve import ROOT, SERVERS, free_port, modern_call, modern_headers, toolwire_http, wait_for_port
from tests.support.redisserve import redis_server
from toolwire.client import Client

JOBS = str(SERVERS / "jobs.py")
LIMITED = str(SERVERS / "limited_echo.py")
MODERN = "2026-07-28"
DEPLOY = ROOT / "examples" / "deploy"


@contextlib.contextmanager
def haproxy(ports: list[int]) -> Iterator[str]:
    """``haproxy`` with the shipped configuration (examples/deploy/haproxy.cfg) on a free port of
    127.0.0.1, round robin over the three replicas on ``ports``; yields its URL."""
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    assert Path(binary).exists(), "these tests need haproxy (scripts/setup.sh installs it when run as root)"
    port = free_port()
    addresses = {f"REPLICA_{index}": f"127.0.0.1:{replica}" for index, replica in enumerate(ports)}
    environment = {**os.environ, "MCP_BIND": f"127.0.0.1:{port}", **addresses}
    command = [binary, "-f", str(DEPLOY / "haproxy.cfg"), "-db"]
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="module")
def balanced() -> Iterator[str]:
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        ports = [free_port() for _ in range(3)]
        for port in ports:
            stack.enter_context(toolwire_http(JOBS, "--redis", redis, "--allow-host", "127.0.0.1", port=port))
        yield stack.enter_context(haproxy(ports))


async def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def test_requests_go_round_robin_to_every_replica(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN) as client:
        answered = {(await client.call_tool("whoami")).text for _ in range(6)}
    assert len(answered) == 3  # three processes answered: nothing sticks


async def test_a_questions_rounds_land_on_different_replicas(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN, elicitation=answer_name) as client:
        for _ in range(3):  # each round may reach another replica: the sealing key is shared
            assert (await client.call_tool("ask_name")).text == "Hello, Ada"


async def test_tasks_are_polled_answered_and_cancelled_through_any_replica(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN, elicitation=answer_name) as client:
        handle = await client.start_task("sleep", {"seconds": 0.3})
        assert (await handle.result()).text == "slept 0.3 s"
        asking = await client.start_task("ask_name")  # tasks/update lands wherever it lands
        assert (await asking.result(timeout=30)).text == "Hello, Ada"
        long = await client.start_task("sleep", {"seconds": 30})
        started = time.monotonic()
        await long.cancel()  # maybe through another replica than the one running it
        for _ in range(3):
            assert (await long.refresh()).status == "cancelled"
        assert time.monotonic() - started < 10


async def test_many_calls_at_once_through_the_balancer(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN) as client:
        results = await asyncio.gather(*(client.call_tool("quick", {"x": n}) for n in range(60)))
    assert [result.text for result in results] == [str(2 * n) for n in range(60)]


# -- the event store of resumable streams, in Redis ----------------------------------------------


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_event_stores_replay_what_came_after_in_order_and_forget(kind: str, redis_url: str) -> None:
    from toolwire.stores.redis import RedisEventStore
    from toolwire.transports.http.sse import MemoryEventStore

    store: Any = MemoryEventStore(max_events=3) if kind == "memory" else RedisEventStore(redis_url, max_events=3)
    for sequence in range(0, 5):
        await store.store("s1", sequence, b'{"n": %d}' % sequence)
    await store.store("s2", 0, b"other")
    assert await store.replay_after("s1", 2) == [(3, b'{"n": 3}'), (4, b'{"n": 4}')]
    assert [number for number, _ in await store.replay_after("s1", -1)] == [2, 3, 4]  # trimmed to 3
    assert await store.replay_after("s2", -1) == [(0, b"other")]
    await store.forget("s1")
    assert await store.replay_after("s1", -1) == []
    if kind == "redis":
        await store.close()


async def test_a_stream_resumes_from_events_kept_in_redis(redis_url: str) -> None:
    import httpx

    from tests.support.httpserve import (
        STREAMING,
        InProcess,
        fresh_server,
        legacy_call,
        open_session,
        parse_sse,
        read_sse,
    )
    from toolwire.stores.redis import RedisEventStore

    store = RedisEventStore(redis_url, prefix="resume-test:")
    app = fresh_server(STREAMING).http_app(event_store=store)
    async with InProcess(app) as url, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, url)
        body = legacy_call("steps", {"n": 3, "delay": 0.15}, id=8, progressToken="s")
        async with http.stream("POST", url, json=body, headers=headers) as reply:
            events = read_sse(reply)
            await events.__anext__()  # the priming event
            first = await events.__anext__()
        await asyncio.sleep(0.8)  # the call ends while nobody listens: its events wait in Redis
        assert await store.redis.keys("resume-test:*")
        resumed = await http.get(url, headers={**headers, "Accept": "text/event-stream", "Last-Event-ID": first.id})
        rest = parse_sse(resumed.text)
        assert [event.message.get("params", {}).get("progress") for event in rest[:2]] == [2, 3]
        assert rest[-1].message["result"]["content"][0]["text"] == "3 steps"
    await store.close()


async def test_tasks_survive_a_redis_restart_with_clear_errors_meanwhile() -> None:
    from toolwire.client import ServerError

    with redis_server() as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with toolwire_http(JOBS, "--redis", url) as (server, _):
            async with Client(server, protocol=MODERN) as client:
                assert (await client.call_tool("sleep", {"seconds": 0}, task=True)).text == "slept 0 s"
                import redis.asyncio as aioredis
                from redis.exceptions import ConnectionError as RedisGone

                admin = aioredis.Redis.from_url(url)
                with contextlib.suppress(RedisGone):
                    await admin.shutdown(nosave=True)  # Redis stops, as for a restart
                await admin.aclose()
                await asyncio.sleep(0.3)
                with pytest.raises(ServerError, match="the task store failed") as down:
                    await client.call_tool("sleep", {"seconds": 0}, task=True)
                assert down.value.code == -32603
                assert (await client.call_tool("quick", {"x": 4})).text == "8"  # what needs no Redis still works
                restarted = subprocess.Popen(
                    ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                try:
                    wait_for_port(port, restarted)
                    assert (await client.call_tool("sleep", {"seconds": 0}, task=True)).text == "slept 0 s"
                finally:
                    restarted.terminate()
                    restarted.wait(10)


# -- the legacy wire: sessions shared by the replicas -------------------------------------------

LEGACY = "2025-11-25"


async def test_a_legacy_sessions_requests_land_on_every_replica(balanced: str) -> None:
    async with Client(balanced, protocol=LEGACY) as client:
        assert client.version == LEGACY
        answered = {(await client.call_tool("whoami")).text for _ in range(6)}
        assert len(answered) == 3  # one session, served by all three
        tools = await client.list_tools(refresh=True)
        assert "whoami" in {tool.name for tool in tools}


async def test_a_legacy_question_is_answered_through_another_replica(balanced: str) -> None:
    async with Client(balanced, protocol=LEGACY, elicitation=answer_name) as client:
        for _ in range(3):  # the answer's POST lands anywhere; it reaches the replica that asked
            assert (await client.call_tool("ask_name")).text == "Hello, Ada"
        progress: list[float] = []
        result = await client.call_tool(
            "sleep", {"seconds": 0.2}, progress=lambda done, total, message: progress.append(done)
        )
        assert result.text == "slept 0.2 s" and progress == [1, 2, 3, 4]


async def test_list_changes_on_every_replica_reach_the_sessions_get_stream(balanced: str) -> None:
    changed: list[str] = []
    async with Client(balanced, protocol=LEGACY, on_tools_changed=lambda: changed.append("tools")) as client:
        await client.list_tools()
        for _ in range(3):  # one call on each replica; the GET stream is on one of them
            await client.call_tool("grow")
        for _ in range(50):
            if len(changed) >= 3:
                break
            await asyncio.sleep(0.05)
    assert len(changed) == 3


async def test_a_sessions_resource_subscriptions_hold_on_every_replica(balanced: str) -> None:
    updated: list[str] = []
    async with Client(balanced, protocol=LEGACY, on_resource_updated=updated.append) as client:
        await client.subscribe_resource("jobs://counter")  # on one replica
        for _ in range(6):  # updates on every replica, two of which did not receive the subscription
            await client.call_tool("bump")
        for _ in range(60):
            if len(updated) >= 6:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # nothing comes twice
        assert updated == ["jobs://counter"] * 6
        await client.unsubscribe_resource("jobs://counter")
        for _ in range(3):
            await client.call_tool("bump")
        await asyncio.sleep(0.3)
    assert len(updated) == 6


async def test_a_session_ended_on_one_replica_is_gone_on_all(balanced: str) -> None:
    import httpx

    async with Client(balanced, protocol=LEGACY) as client:
        await client.call_tool("whoami")
        session = client.transport.session_id  # type: ignore[attr-defined]
    assert session is not None  # closing the client sent DELETE to one of the replicas
    async with httpx.AsyncClient(timeout=10) as http:
        for _ in range(3):
            answer = await http.post(
                balanced,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                headers={
                    "Mcp-Session-Id": session,
                    "MCP-Protocol-Version": LEGACY,
                    "Accept": "application/json, text/event-stream",
                },
            )
            assert answer.status_code == 404


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_sdk_client_works_across_replicas(balanced: str, mode: str) -> None:
    import mcp_types
    from mcp import Client as SdkClient

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Lin"})

    async with SdkClient(balanced, mode=mode, read_timeout_seconds=10, elicitation_callback=elicit) as client:  # type: ignore[arg-type]
        assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
        pids = {(await client.call_tool("whoami", {})).content[0].text for _ in range(6)}  # type: ignore[union-attr]
        assert len(pids) == 3
        asked = await client.call_tool("ask_name", {})
        assert asked.content[0].text == "Hello, Lin"  # type: ignore[union-attr]


# -- a stream resumed on another replica -----------------------------------------------------------


@contextlib.contextmanager
def two_replicas() -> Iterator[tuple[tuple[str, Any], tuple[str, Any]]]:
    with redis_server() as redis, contextlib.ExitStack() as stack:
        first = stack.enter_context(toolwire_http(JOBS, "--redis", redis))
        second = stack.enter_context(toolwire_http(JOBS, "--redis", redis))
        yield first, second


async def open_legacy(http: Any, url: str) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": LEGACY}
    opened = await http.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        },
        headers=headers,
    )
    session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


async def first_events(http: Any, url: str, session: dict[str, str], seconds: float) -> list[Any]:
    """Start ``sleep`` on ``url`` and read its stream's priming event and first progress."""
    from tests.support.httpserve import read_sse

    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"seconds": seconds}, "_meta": {"progressToken": "p"}},
    }
    seen = []
    async with http.stream("POST", url, json=call, headers=session) as reply:
        events = read_sse(reply)
        seen.append(await events.__anext__())  # priming
        seen.append(await events.__anext__())  # progress 1
    return seen


async def test_a_stream_cut_off_resumes_on_another_replica_with_nothing_lost_or_repeated() -> None:
    import httpx

    from tests.support.httpserve import parse_sse

    with two_replicas() as ((first, _), (second, _)):
        async with httpx.AsyncClient(timeout=15) as http:
            session = await open_legacy(http, first)
            priming, progress = await first_events(http, first, session, 0.5)  # then the connection drops
            assert progress.message["params"]["progress"] == 1
            await asyncio.sleep(1.0)  # the call ends on the first replica while nobody listens
            resumed = await http.get(second, headers={**session, "Last-Event-ID": progress.id})
            assert resumed.status_code == 200
            rest = parse_sse(resumed.text)
    steps = [event.message["params"]["progress"] for event in rest if "params" in event.message]
    assert steps == list(range(2, 11))  # each event once, in order, none before the one seen
    assert rest[-1].message == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": "slept 0.5 s"}]},
    }
    ids = [event.id for event in rest]
    assert len(set(ids)) == len(ids) and priming.id not in ids and progress.id not in ids


async def test_a_replica_killed_mid_stream_leaves_its_events_to_another_and_runs_nothing_twice() -> None:
    import os
    import signal

    import httpx

    from tests.support.httpserve import read_sse

    with two_replicas() as ((first, first_process), (second, _)):
        async with httpx.AsyncClient(timeout=15) as http:
            session = await open_legacy(http, first)
            _, progress = await first_events(http, first, session, 5)
            await asyncio.sleep(0.3)  # a few more events are stored before the replica dies
            os.kill(first_process.pid, signal.SIGKILL)
            first_process.wait(10)
            seen: list[Any] = []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    async with http.stream("GET", second, headers={**session, "Last-Event-ID": progress.id}) as resumed:
                        assert resumed.status_code == 200
                        async for event in read_sse(resumed):
                            seen.append(event)
    steps = [event.message["params"]["progress"] for event in seen]
    assert steps and steps == list(range(2, 2 + len(steps)))  # what was stored, once, in order
    assert all("result" not in event.message for event in seen)  # the call died with its replica: not run again


async def test_list_changes_reach_2026_07_28_listeners_on_every_replica(balanced: str) -> None:
    changed: list[str] = []
    async with Client(balanced, protocol=MODERN, on_tools_changed=lambda: changed.append("tools")) as client:
        await client.list_tools()
        await asyncio.sleep(0.3)  # the subscriptions/listen stream is open on one replica
        for _ in range(3):  # one change on each replica
            await client.call_tool("grow")
        for _ in range(60):
            if len(changed) >= 3:
                break
            await asyncio.sleep(0.05)
    assert len(changed) == 3


# -- the deployment files of examples/deploy (run in containers: test_deploy_containers.py) -------


async def test_behind_haproxy_each_client_has_its_own_rate_limit() -> None:
    """The shipped haproxy.cfg names the client in X-Forwarded-For; a replica that trusts
    haproxy's address keys anonymous callers' rate limits (2 calls a minute) on that client."""
    port = free_port()
    with (
        toolwire_http(LIMITED, "--forwarded-allow-ips", "127.0.0.1", port=port),
        haproxy([port, port, port]) as url,
    ):

        async def calls(source: str, count: int) -> list[bool]:
            transport = httpx.AsyncHTTPTransport(local_address=source)
            async with httpx.AsyncClient(timeout=10, transport=transport) as http:
                allowed = []
                for _ in range(count):
                    body = modern_call("echo", {"text": "hi"})
                    reply = await http.post(url, json=body, headers=modern_headers("tools/call", "echo"))
                    allowed.append(not reply.json()["result"].get("isError", False))
                return allowed

        assert await calls("127.0.0.2", 3) == [True, True, False]
        assert await calls("127.0.0.3", 2) == [True, True]


def test_the_kubernetes_manifest_and_the_image_run_the_compose_command() -> None:
    replica = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["replica1"]
    documents = {
        (document["kind"], document["metadata"]["name"]): document
        for document in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text())
    }
    assert set(documents) == {
        ("Deployment", "redis"),
        ("Service", "redis"),
        ("Deployment", "toolwire"),
        ("Service", "toolwire"),
        ("Deployment", "toolwire-worker"),
        ("Ingress", "toolwire"),
    }
    deployment = documents["Deployment", "toolwire"]["spec"]
    container = deployment["template"]["spec"]["containers"][0]
    command = container["command"]
    allow = command.index("--allow-host")
    assert command[:allow] + command[allow + 2 :] == replica["command"]  # the same, with its public name
    assert deployment["replicas"] == 3
    assert container["ports"] == [{"containerPort": 8000}] and container["readinessProbe"]["tcpSocket"] == {
        "port": 8000
    }
    assert documents["Service", "toolwire"]["spec"]["ports"] == [{"port": 80, "targetPort": 8000}]
    assert documents["Service", "redis"]["spec"]["ports"][0]["port"] == 6379
    backend = documents["Ingress", "toolwire"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "toolwire", "port": {"number": 80}}
    image = [line for line in (DEPLOY / "Dockerfile").read_text().splitlines() if line.startswith("CMD ")]
    assert [json.loads(line[4:]) for line in image] == [replica["command"]]
    assert replica["build"] == {"context": "../..", "dockerfile": "examples/deploy/Dockerfile"}


def test_the_deployment_files_run_workers_beside_the_replicas_and_scale_them_apart() -> None:
    """compose.yaml and kubernetes.yaml run the replicas in queue mode and a worker deployment of
    the same server file, image and Redis, with its own replica count and no port or Service."""
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    replica, worker = services["replica1"], services["worker"]
    redis = ["--redis", "redis://redis:6379/0", "--queue", "redis://redis:6379/0"]
    served = replica["command"][2]
    assert served == "examples/report_server.py" and replica["command"][-4:] == redis
    assert worker["command"] == ["toolwire", "worker", served, *redis]
    assert worker["image"] == replica["image"] and worker["build"] == replica["build"]
    assert worker["deploy"] == {"replicas": 2} and "deploy" not in replica
    assert worker["stop_grace_period"] == "60s" and "ports" not in worker and "environment" not in worker
    assert worker["depends_on"] == ["redis"]
    documents = {
        (document["kind"], document["metadata"]["name"]): document
        for document in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text())
    }
    workers = documents["Deployment", "toolwire-worker"]["spec"]
    replicas = documents["Deployment", "toolwire"]["spec"]
    assert workers["replicas"] == 2 and replicas["replicas"] == 3
    assert workers["template"]["metadata"]["labels"] == {"app": "toolwire-worker"}
    assert documents["Service", "toolwire"]["spec"]["selector"] == {"app": "toolwire"}  # the replicas only
    assert not any(kind == "Service" and "worker" in name for kind, name in documents)
    assert workers["template"]["spec"]["terminationGracePeriodSeconds"] == 60  # above the worker's --grace
    (container,) = workers["template"]["spec"]["containers"]
    assert container["command"] == worker["command"] and "ports" not in container and "env" not in container
    assert container["image"] == replicas["template"]["spec"]["containers"][0]["image"]
    assert "--queue" in replicas["template"]["spec"]["containers"][0]["command"]


async def test_a_sessions_log_level_set_on_one_replica_holds_on_the_other() -> None:
    import httpx

    def call(id: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatter", "arguments": {}}}

    with two_replicas() as ((first, _), (second, _)):
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_legacy(http, first)
            level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}}
            assert (await http.post(first, json=level, headers=session)).status_code == 200
            for url in (second, first):  # the second replica takes the session up after the change
                answer = (await http.post(url, json=call(3), headers=session)).text
                assert "a debug line" in answer and "a warning line" in answer  # not only the default "info"


async def test_a_session_is_found_on_the_other_replica_as_soon_as_it_is_opened() -> None:
    from toolwire.client.http11 import ConnectionPool

    initialize = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
    ).encode()
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'

    def head(url: str, body: bytes, session: bytes = b"") -> bytes:
        port = url.split(":")[2].split("/")[0].encode()
        extra = b"Mcp-Session-Id: " + session + b"\r\n" if session else b""
        return (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + port + b"\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: "
            + LEGACY.encode()
            + b"\r\n"
            + extra
            + b"Content-Length: %d\r\n\r\n" % len(body)
        )

    def origin(url: str) -> tuple[str, str, int]:
        return ("http", "127.0.0.1", int(url.split(":")[2].split("/")[0]))

    with two_replicas() as ((first, _), (second, _)):
        pool = ConnectionPool()
        statuses = []
        for _ in range(20):  # the next request leaves the moment the answer is read
            opened = await pool.send(origin(first), head(first, initialize), initialize, False, {})
            await opened.read()
            session = dict(opened.headers)[b"mcp-session-id"]
            reply = await pool.send(origin(second), head(second, initialized, session), initialized, False, {})
            await reply.read()
            statuses.append(reply.status)
        await pool.aclose()
    assert statuses == [202] * 20


async def test_a_change_the_shared_store_refuses_is_undone_and_answered_503() -> None:
    import httpx
    import redis.asyncio as aioredis

    def call(id: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatter", "arguments": {}}}

    level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}}
    with redis_server() as redis, contextlib.ExitStack() as stack:
        first, _ = stack.enter_context(toolwire_http(JOBS, "--redis", redis))
        second, _ = stack.enter_context(toolwire_http(JOBS, "--redis", redis))
        store = aioredis.Redis.from_url(redis)
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_legacy(http, first)
            # Redis takes the session's renewal (GETEX), then refuses the write of its new state.
            await store.execute_command("ACL", "SETUSER", "default", "-set")
            refused = await http.post(first, json=level, headers=session)
            assert refused.status_code == 503
            assert refused.json()["id"] == 2 and "nothing was changed" in refused.json()["error"]["message"]
            for url in (first, second):  # the level changed nowhere
                answer = (await http.post(url, json=call(3), headers=session)).text
                assert "a warning line" in answer and "a debug line" not in answer
            await store.execute_command("ACL", "SETUSER", "default", "+set")
            assert (await http.post(first, json=level, headers=session)).status_code == 200
            for url in (second, first):
                assert "a debug line" in (await http.post(url, json=call(4), headers=session)).text
        await store.aclose()


async def test_a_task_of_a_replica_killed_on_another_host_reads_as_interrupted(monkeypatch: Any) -> None:
    """The replica running the task has a host name of its own (a UTS namespace: to this
    one, another machine), so only its lease lapsing in Redis tells that it died."""
    import signal
    import sys

    from toolwire.tasks.model import INTERRUPTED

    assert shutil.which("unshare") and os.geteuid() == 0, "this test needs unshare and root (for a host name)"
    with redis_server() as redis, contextlib.ExitStack() as stack:
        monkeypatch.setenv("JOBS_REDIS", redis)
        monkeypatch.setenv("JOBS_LEASE", "2")
        port = free_port()
        command = ["unshare", "--uts", "sh", "-c", 'hostname elsewhere && exec "$@"', "sh"]
        command += [sys.executable, "-m", "toolwire", "run", JOBS, "--http", str(port)]
        elsewhere = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(elsewhere.wait, 10)
        stack.callback(elsewhere.kill)
        wait_for_port(port, elsewhere)
        here, _ = stack.enter_context(toolwire_http(JOBS))
        async with Client(f"http://127.0.0.1:{port}/mcp", protocol=MODERN) as client:
            task_id = (await client.start_task("sleep", {"seconds": 60})).id
        os.kill(elsewhere.pid, signal.SIGKILL)  # unshare and sh exec'd: the server's own process
        killed = time.monotonic()
        async with Client(here, protocol=MODERN) as client:
            task = client.task(task_id)
            assert (await task.refresh()).status == "working"  # its lease (2 s, renewed every 2/3 s) still runs
            while (info := await task.refresh()).status == "working":
                assert time.monotonic() - killed < 10, "the task still reads as working 10 s after its replica died"
                await asyncio.sleep(0.1)
            assert info.status == "failed" and info.message == INTERRUPTED
            assert time.monotonic() - killed > 1.3  # once the lease lapsed, not before
