#!/usr/bin/env bash
# Set everything up (scripts/setup.sh), then run every check, each whatever the others did,
# and end with a table of their results and times (exit status 1 if any failed):
# ruff, mypy --strict (src), the whole test suite (arguments go to pytest), the official MCP
# conformance suite against toolwire's server and client, the wheel installed with [chat] in
# a fresh venv (scripts/wheel-check.sh, about 30 s), and the compiled build
# (scripts/compiled-check.sh: the hot modules compiled with mypyc, the whole test suite and the
# conformance suite run again against it). About 40 minutes on 2 cores. If the setup fails,
# nothing else can run: it says so and stops.
set -uo pipefail
cd "$(dirname "$0")/.."
echo "== setup: scripts/setup.sh"
./scripts/setup.sh
status=$?
if [ "$status" != 0 ]; then
    echo "test.sh: the setup failed (scripts/setup.sh, exit status $status): no check can run without it;" \
        "not run: ruff, mypy, pytest, conformance, wheel check, compiled check" >&2
    exit 1
fi
. .venv/bin/activate
pytest_args=""
[ $# -gt 0 ] && pytest_args="$(printf ' %q' "$@")"
exec ./scripts/stages.sh \
    ruff "ruff check src tests examples benchmarks" \
    mypy "mypy src" \
    pytest "python -m pytest -q$pytest_args" \
    conformance "python tests/conformance/run.py" \
    "wheel check" "./scripts/wheel-check.sh" \
    "compiled check" "./scripts/compiled-check.sh"
