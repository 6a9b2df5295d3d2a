"""A missing optional dependency is one line naming the extra to install, wherever it is
needed: the command line's options and the classes of the API. Each test runs a real process
in which the extra's modules cannot be imported (see ``absent/sitecustomize.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.clirun import absent, failed, toolwire

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed_server.py")
KNOWLEDGE_BASE = str(ROOT / "examples" / "knowledge_base.py")
SKILL = str(ROOT / "examples" / "conformance_skills" / "git-workflow")
PETSTORE = ROOT / "tests" / "openapi" / "data" / "petstore-3.0"


def hint(extra: str) -> str:
    return f"needs the '{extra}' extra: pip install 'toolwire[{extra}]' (in a checkout of toolwire: pip install -e '.[{extra}]')"


@pytest.mark.parametrize(
    ("modules", "args", "said"),
    [
        (["redis"], ["run", SEED, "--http", "8765", "--redis", "redis://127.0.0.1:1"], f"--redis {hint('redis')}"),
        (["redis"], ["run", SEED, "--tasks", "redis://127.0.0.1:1"], f"--tasks with a Redis URL {hint('redis')}"),
        (["granian"], ["run", SEED, "--http", "8765", "--granian"], f"--granian {hint('granian')}"),
        (["granian"], ["proxy", SEED, "--http", "8765", "--granian"], f"--granian {hint('granian')}"),
        (["jwt"], ["run", SEED, "--http", "8765", "--issuer", "https://id.example"], f"--issuer {hint('auth')}"),
        (["openai"], ["ask", SEED, "hello?"], f"the openai provider {hint('chat')}"),
        (["anthropic"], ["chat", SEED, "--provider", "anthropic"], f"the anthropic provider {hint('chat')}"),
        (["rjieba"], ["run", KNOWLEDGE_BASE], f"the knowledge base example {hint('kb')}"),
        (["yaml"], ["run", SEED, "--skills", SKILL], f"--skills {SKILL}: reading a SKILL.md {hint('skills')}"),
        (["yaml"], ["openapi", f"{PETSTORE}.yaml"], f"a YAML OpenAPI document {hint('openapi')}"),
        (["bm25s"], ["openapi", f"{PETSTORE}.json", "--search"], f"--search {hint('search')}"),
    ],
)
def test_an_option_whose_extra_is_missing_says_which_to_install(modules: list[str], args: list[str], said: str) -> None:
    keys = {"DEEPSEEK_API_KEY": "x", "ANTHROPIC_API_KEY": "x"}
    done = toolwire(*args, **keys, **absent(*modules))
    status = 2 if args[0] in ("ask", "chat") or "--skills" in args else 1
    usage = f" (see toolwire {args[0]} -h)" if status == 2 else ""  # a usage error names the help
    assert failed(done, status) == f"toolwire: {said}{usage}"
    assert len(done.stderr.splitlines()) == 1


API = """
import asyncio
from toolwire.extras import ExtraMissing

def attempt(what, make):
    try:
        make()
    except ExtraMissing as exc:
        print(f"{what}: {exc}")
    else:
        print(f"{what}: no error")

from toolwire.stores.redis import RedisLimiter, RedisTaskStore
attempt("limiter", lambda: RedisLimiter("redis://127.0.0.1:1"))
attempt("tasks", lambda: RedisTaskStore("redis://127.0.0.1:1"))
from toolwire.transports.http.shared import SharedSessions
attempt("sessions", lambda: SharedSessions("redis://127.0.0.1:1"))
from toolwire.auth import JWTVerifier
attempt("verifier", lambda: JWTVerifier("https://id.example", "https://api.example/mcp"))
from toolwire.auth.client.dpop import DPoPKey
attempt("dpop", DPoPKey)
from toolwire.auth.client.tokenstore import KeyringTokenStore
attempt("keyring", KeyringTokenStore)
from toolwire.guards.telemetry import Telemetry
attempt("guard", Telemetry)
from toolwire.client.telemetry import ClientTelemetry
attempt("client", ClientTelemetry)
from toolwire.host.providers.openai import OpenAIProvider
attempt("openai", OpenAIProvider("m", api_key="x").prepare)
from toolwire.host.providers.anthropic import AnthropicProvider
attempt("anthropic", AnthropicProvider("m", api_key="x").prepare)
from toolwire import Server
attempt("granian", lambda: Server("s").run_http("127.0.0.1", 0, runner="granian"))
"""


def test_every_class_that_needs_an_extra_says_which_when_it_is_missing() -> None:
    modules = ["redis", "jwt", "cryptography", "keyring", "opentelemetry", "openai", "anthropic", "granian"]
    env = {**os.environ, **absent(*modules)}
    done = subprocess.run([sys.executable, "-c", API], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"limiter: RedisLimiter {hint('redis')}",
        f"tasks: RedisTaskStore {hint('redis')}",
        f"sessions: Sessions shared through Redis {hint('redis')}",
        f"verifier: JWTVerifier {hint('auth')}",
        f"dpop: DPoPKey {hint('auth')}",
        f"keyring: KeyringTokenStore {hint('keyring')}",
        f"guard: The Telemetry guard {hint('otel')}",
        f"client: Client telemetry {hint('otel')}",
        f"openai: OpenAIProvider {hint('openai')}",
        f"anthropic: AnthropicProvider {hint('anthropic')}",
        f"granian: Serving with granian {hint('granian')}",
    ]
