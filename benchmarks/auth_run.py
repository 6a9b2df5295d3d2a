"""Benchmark authorization over Streamable HTTP: the same server without it, with verified
tokens cached, and verifying the token of every request, side by side in one run.

    python benchmarks/auth_run.py [--quick] [--docs | --no-docs]

``http_echo_server.py`` is served three times by toolwire's own HTTP server: plain, with ``--auth cached`` and
with ``--auth every`` (a ``ProtectedResource`` whose JWT keys are given in configuration, an
RSA-2048 key signing RS256 tokens, so nothing is fetched while measuring). ``http_load.py``
sends each one ``tools/call`` requests over 16 keep-alive connections, with a bearer token
minted here for that server's URL. Rounds are interleaved and each figure is the median of
its rounds. The target: verifying a JWT with a cached key adds at most 50 µs of server CPU per
request (``every`` minus plain).
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jwt
import orjson
from cryptography.hazmat.primitives.asymmetric import rsa

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_run
import run as stdio

START_MARK = "<!-- auth-results:start -->"
END_MARK = "<!-- auth-results:end -->"
ISSUER = "https://issuer.bench"
KINDS = {"off": "without authorization", "cached": "tokens verified once, then cached", "every": "every token verified"}
CASES = {"modern": "2026-07-28, JSON answers", "legacy_json": "2025-11-25 session, JSON answers"}


def keys(directory: Path) -> tuple[Any, str]:
    """A signing key and the path of a JWKS file with its public half."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = orjson.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    public.update(kid="bench", use="sig", alg="RS256")
    path = directory / "jwks.json"
    path.write_bytes(orjson.dumps({"keys": [public]}))
    return key, str(path)


def token(key: Any, port: int) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "sub": "bench", "aud": f"http://127.0.0.1:{port}/mcp", "iat": now, "exp": now + 3600}
    return jwt.encode(
        {**claims, "scope": "tools", "client_id": "bench"}, key, algorithm="RS256", headers={"kid": "bench"}
    )


def measure(rounds: int, seconds: float, warmup: float) -> dict[str, dict[str, list[dict[str, float]]]]:
    directory = Path(tempfile.mkdtemp(prefix="auth-bench-"))
    key, jwks = keys(directory)
    servers: dict[str, http_run.Server] = {}
    load: http_run.Load | None = None
    try:
        for kind in KINDS:
            options = () if kind == "off" else ("--auth", kind, "--jwks", jwks)
            servers[kind] = http_run.Server("toolwire", "toolwire", options)
        load = http_run.Load()
        tokens = {kind: token(key, server.port) if kind != "off" else "" for kind, server in servers.items()}
        for server in servers.values():
            server.wait_ready()
        for case in CASES:
            for kind, server in servers.items():
                load.run(server, case, warmup, authorization=tokens[kind])
        samples: dict[str, dict[str, list[dict[str, float]]]] = {case: {kind: [] for kind in KINDS} for case in CASES}
        for number in range(rounds):
            for case in CASES:
                for kind, server in servers.items():
                    samples[case][kind].append(load.run(server, case, seconds, authorization=tokens[kind]))
            stdio._log(f"  round {number + 1}/{rounds} done")
        return samples
    finally:
        if load is not None:
            load.close()
        for server in servers.values():
            server.stop()


def render(
    samples: dict[str, dict[str, list[dict[str, float]]]], mode: str, rounds: int, seconds: float
) -> tuple[str, bool]:
    text = (
        f"Run of {datetime.date.today().isoformat()} ({mode}: {rounds} rounds of {seconds:g} s, "
        f"{http_run.CONNECTIONS} connections), Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores; RS256 tokens, RSA-2048 key.\n\n"
        "| case | authorization | calls/s | server CPU per call | added per call | target | |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    passed = True
    for case, case_label in CASES.items():
        plain = statistics.median(s["cpu_us"] for s in samples[case]["off"])
        for kind, label in KINDS.items():
            rate = statistics.median(s["rate"] for s in samples[case][kind])
            cpu = statistics.median(s["cpu_us"] for s in samples[case][kind])
            added = f"{cpu - plain:+.1f} µs" if kind != "off" else ""
            target, mark = "", ""
            if kind == "every":
                ok = cpu - plain <= 50
                passed = passed and ok
                target, mark = "<= +50 µs", "pass" if ok else "**missed**"
            text += f"| {case_label} | {label} | {rate:,.0f} | {cpu:.1f} µs | {added} | {target} | {mark} |\n"
    return text, passed


def main(argv: list[str] | None = None) -> int:
    parser = stdio.options(__doc__, "about 20 s")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    rounds, seconds, warmup = (2, 1.0, 0.3) if args.quick else (5, 2.0, 1.0)
    samples = measure(rounds, seconds, warmup)
    text, passed = render(samples, mode, rounds, seconds)
    stdio.publish(text, None, None, stdio.wants_docs(args), (START_MARK, END_MARK), "authorization results")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
