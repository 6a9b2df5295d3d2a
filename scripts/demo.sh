#!/usr/bin/env bash
# Run the demo (the seed example server driven end to end over stdio) with only what it needs:
# toolwire and its runtime dependencies, at the pinned versions, in .venv. The test toolchain
# (linters, the official SDK, Node.js and the npm peers) waits for scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3 || true)}"
if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "toolwire needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
if ! .venv/bin/python -c 'import toolwire, re2' 2>/dev/null; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -c requirements/lock.txt -e '.[examples]'
fi
exec .venv/bin/python examples/demo.py "$@"
