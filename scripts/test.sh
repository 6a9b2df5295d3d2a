#!/usr/bin/env bash
# Set everything up, then run every check: ruff, mypy --strict (src), the whole test suite,
# the official MCP conformance suite against toolwire's server and client, and the wheel
# installed with [chat] in a fresh venv (scripts/wheel-check.sh, about 30 s), and the compiled
# build (scripts/compiled-check.sh: the hot modules compiled with mypyc, the whole test suite
# and the conformance suite run again against it).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. .venv/bin/activate
echo "== ruff"
ruff check src tests examples benchmarks
echo "== mypy --strict src"
mypy src
echo "== pytest"
python -m pytest -q "$@"
echo "== MCP conformance suite"
python tests/conformance/run.py
echo "== the wheel, installed with [chat] in a fresh venv"
./scripts/wheel-check.sh
echo "== the compiled build (mypyc), in a fresh venv"
./scripts/compiled-check.sh
