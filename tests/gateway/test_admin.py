"""The gateway's admin page (``/admin``) on a real ``toolwire gateway --http`` process: its
own secret (bearer or login cookie), what it shows (upstreams, their state and tools,
sessions, the last calls), that no secret ever reaches it, and the page itself live in
real Chromium."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.test_gateway import BASIC, command_of
from tests.support.chromium import chromium
from tests.support.clirun import environment, failed, toolwire
from tests.support.httpserve import free_port, wait_for_port
from toolwire.client import Client
from toolwire.gateway.admin import admin_config
from toolwire.gateway.config import ConfigError

TOKEN = "admin-token-0123456789"
#: Values the configuration holds that the page must never show.
SECRETS = ["env-secret-4242", "header-secret-777", "url-password-55", "query-secret-99", TOKEN]
#: An upstream whose tool's description is HTML (shown as text) and says which process it is.
VICTIM = """
import os
from toolwire import Server

server = Server("victim")


@server.tool(description='<img id="injected" src="x">')
def pid() -> int:
    return os.getpid()
"""


ADMIN = 'enabled = true\ntoken_env = "GATEWAY_ADMIN"\n'


def write_config(folder: Path, admin: str = ADMIN, more: str = "") -> Path:
    config = folder / "gateway.toml"
    (folder / "victim.py").write_text(VICTIM)
    config.write_text(
        f'[upstreams.victim]\ncommand = {command_of(str(folder / "victim.py"))}\nstart = "eager"\n'
        f"[upstreams.basic]\ncommand = {command_of(BASIC)}\n"
        'env = { BASIC_KEY = "env-secret-4242" }\nstart = "eager"\n'
        # an upstream that is down: its error must not show its credentials either
        f'[upstreams.remote]\nurl = "http://someone:url-password-55@127.0.0.1:{free_port()}/mcp?key=query-secret-99"\n'
        'headers = { "X-Api-Key" = "header-secret-777" }\nstart = "eager"\n'
        f"[admin]\n{admin}{more}"
    )
    return config


@contextmanager
def gateway(folder: Path, more: str = "") -> Iterator[str]:
    """A gateway with the admin page over HTTP (``more``: tables added to its file); yields its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "toolwire", "gateway", str(write_config(folder, more=more)), "--http", str(port)]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment(GATEWAY_ADMIN=TOKEN)
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


async def test_the_state_needs_the_token_and_shows_upstreams_sessions_and_calls_without_secrets(
    tmp_path: Path,
) -> None:
    with gateway(tmp_path) as base:
        # a legacy session calls a tool (the eager upstreams were tried before it was answered)
        async with Client(f"{base}/mcp", protocol="2025-11-25", name="ops-test") as client:
            assert (await client.call_tool("basic.echo", {"text": "hello"})).text == "hello"
            async with httpx.AsyncClient(base_url=base) as http:
                assert (await http.get("/admin/api/state")).status_code == 401
                wrong = await http.get("/admin/api/state", headers={"Authorization": "Bearer nope"})
                assert wrong.status_code == 401
                reply = await http.get("/admin/api/state", headers={"Authorization": f"Bearer {TOKEN}"})
                assert reply.status_code == 200
                state = reply.json()
                page = await http.get("/admin", headers={"Authorization": f"Bearer {TOKEN}"})
                login = await http.get("/admin")
        upstreams = {upstream["name"]: upstream for upstream in state["upstreams"]}
        basic, remote = upstreams["basic"], upstreams["remote"]
        assert (basic["state"], basic["error"], basic["target"]) == ("up", None, Path(sys.executable).name)
        assert "basic.echo" in {tool["name"] for tool in basic["tools"]}
        assert remote["state"] in ("down", "starting") and remote["tools"] == []
        assert remote["target"].startswith("http://127.0.0.1:") and remote["target"].endswith("/mcp")
        [session] = state["sessions"]
        assert (session["client"], session["version"], session["subject"]) == ("ops-test", "2025-11-25", None)
        [call] = state["calls"]
        assert (call["tool"], call["outcome"], call["client"]) == ("basic.echo", "ok", "ops-test")
        assert state["calls_from"] == "this process"
        assert page.status_code == 200 and b'id="upstreams"' in page.content
        assert login.status_code == 200 and b'action="/admin/login"' in login.content
        for shown in (reply.text, page.text):
            assert not [secret for secret in SECRETS if secret in shown]


async def test_with_an_audit_file_the_calls_are_read_from_it(tmp_path: Path) -> None:
    with gateway(tmp_path, '[audit]\nfile = "audit.jsonl"\n') as base:
        async with Client(f"{base}/mcp", protocol="2026-07-28", name="audited") as client:
            assert (await client.call_tool("basic.echo", {"text": "once"})).text == "once"
            assert (await client.call_tool("basic.broken")).is_error
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            state = (await http.get("/admin/api/state")).json()
    assert state["calls_from"] == "the audit file audit.jsonl"
    latest, first = state["calls"]
    assert (first["tool"], first["outcome"], first["client"]) == ("basic.echo", "ok", "audited")
    assert (latest["tool"], latest["outcome"]) == ("basic.broken", "tool_error")
    assert isinstance(first["ms"], float) and first["time"].endswith("Z")


async def test_the_login_form_sets_a_strict_http_only_cookie_and_refuses_other_sites(tmp_path: Path) -> None:
    with gateway(tmp_path) as base:
        async with httpx.AsyncClient(base_url=base) as http:
            wrong = await http.post("/admin/login", data={"token": "guess"})
            assert wrong.status_code == 401 and "Wrong token." in wrong.text
            foreign = await http.post("/admin/login", data={"token": TOKEN}, headers={"Origin": "https://evil.example"})
            assert foreign.status_code == 403
            assert (await http.get("/admin/api/state")).status_code == 401
            signed = await http.post("/admin/login", data={"token": TOKEN})
            assert (signed.status_code, signed.headers["location"]) == (303, "/admin")
            cookie = signed.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
            assert (await http.get("/admin/api/state")).status_code == 200  # the cookie is enough
            assert (await http.post("/admin/api/state")).status_code == 405  # nothing changes state
            assert (await http.get("/admin/nothing")).status_code == 404
            assert (await http.get("/elsewhere")).status_code == 404


def test_the_admin_table_is_checked_and_its_token_required(tmp_path: Path) -> None:
    assert admin_config({}).enabled is False
    with pytest.raises(ConfigError, match=r"\[admin\] 'token' is not a known key"):
        admin_config({"token": "x"})
    with pytest.raises(ConfigError, match=r"'enabled' must be true or false"):
        admin_config({"enabled": "yes"})
    config = write_config(tmp_path, 'enabled = true\ntoken_env = "GATEWAY_ADMIN_UNSET"\n')
    said = failed(toolwire("gateway", str(config), "--http", str(free_port())), 2)
    assert "[admin] is enabled but GATEWAY_ADMIN_UNSET is not set" in said


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


async def test_the_page_signs_in_and_shows_calls_and_restarts_as_they_happen(browser: Any, tmp_path: Path) -> None:
    with gateway(tmp_path) as base:
        page = await browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{base}/admin")
        await page.fill('input[name="token"]', "guess")
        await page.click('button[type="submit"]')
        assert await page.locator(".wrong").inner_text() == "Wrong token."
        await page.fill('input[name="token"]', TOKEN)
        await page.click('button[type="submit"]')
        await page.wait_for_selector('#upstreams tr[data-name="basic"] .state-up')
        assert "basic.echo" in await page.locator('#upstreams tr[data-name="basic"] .tools').inner_text()
        assert await page.locator("#gateway").inner_text() == "toolwire-gateway"
        async with Client(f"{base}/mcp", protocol="2025-11-25", name="watched") as client:
            await client.call_tool("basic.echo", {"text": "seen live"})
            await page.wait_for_selector('#calls td.tool:text-is("basic.echo")')  # no reload: the page polls
            await page.wait_for_selector('#sessions td:text-is("watched")')
            # an upstream dies: the page shows it restarted, without a reload
            os.kill(int((await client.call_tool("victim.pid")).text), signal.SIGKILL)
            await page.wait_for_selector('#upstreams tr[data-name="victim"] td.restarts:text-is("1")')
        victim = page.locator('#upstreams tr[data-name="victim"] .tools li')
        assert await victim.get_attribute("title") == '<img id="injected" src="x">'  # as text, not HTML
        assert await page.locator("#injected").count() == 0
        text = await page.locator("body").inner_text()
        assert not [secret for secret in SECRETS if secret in text]
        assert errors == []
