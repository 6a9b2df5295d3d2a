#!/usr/bin/env bash
# Build toolwire's compiled wheel (TOOLWIRE_COMPILE=1: setup.py compiles the hot modules that
# toolwire/build.py names, with mypyc) from a copy of this tree, and check it:
# - installed in a fresh venv, `toolwire --version` says every hot module is compiled and the
#   protocol core is imported from the venv's extension modules;
# - unpacked, it is what the whole test suite and the conformance suite (server and client)
#   run against (PYTHONPATH at the unpacked wheel, ahead of this tree's editable install;
#   the check fails if the core is imported from anywhere else). Behaviour is the pure
#   build's: any difference is a bug in one of them.
# Prints the time each step took. Usable alone; needs a C compiler and what scripts/setup.sh
# installs. Arguments go to pytest (then those tests run, not the whole suite, and it says so).
# Works in a fresh folder of mktemp's, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
unset PYTHONPATH
PYTHON="${PYTHON:-.venv/bin/python}"
# A folder of its own: two checks at once on one host do not share one.
work="$(mktemp -d "${TMPDIR:-/tmp}/toolwire-compiled-check.XXXXXXXXXX")"
trap 'rm -rf "$work"' EXIT
step() { echo "compiled-check: $1 ($SECONDS s so far)"; }

mkdir "$work/tree"
cp -r pyproject.toml README.md setup.py src "$work/tree/"   # a copy: no build/ or egg-info left here
find "$work/tree" \( -name __pycache__ -prune -o -name '*.so' \) -exec rm -rf {} +
TOOLWIRE_COMPILE=1 "$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/tree"
wheel="$(ls "$work"/dist/toolwire-*.whl)"
case "$wheel" in
    *-py3-none-any.whl) echo "the wheel $(basename "$wheel") is pure Python: nothing was compiled" >&2; exit 1 ;;
esac
step "built $(basename "$wheel")"

"$PYTHON" -m venv "$work/venv"
venv_python="$work/venv/bin/python"
"$venv_python" -m pip install --quiet --disable-pip-version-check -c requirements/lock.txt "$wheel"
shown="$(cd "$work" && "$work/venv/bin/toolwire" --version)"
expected="$("$venv_python" -c 'from toolwire.build import COMPILED; n = len(COMPILED); print(f"compiled: {n} of {n} hot modules")')"
if [[ "$shown" != *"($expected)" ]]; then
    echo "the installed compiled wheel says '$shown', not '... ($expected)'" >&2
    exit 1
fi
imported="$(cd "$work" && "$venv_python" -c 'import toolwire.protocol.connection as c; print(c.__file__)')"
if [[ "$imported" != "$work/venv/"*.so ]]; then
    echo "the protocol core was imported from $imported, not the venv's extension modules" >&2
    exit 1
fi
step "installed it in a fresh venv: $shown"

"$PYTHON" -m zipfile -e "$wheel" "$work/unpacked"
export PYTHONPATH="$work/unpacked"
imported="$("$PYTHON" -c 'import toolwire.protocol.connection as c; print(c.__file__)')"
if [[ "$imported" != "$work/unpacked/"*.so ]]; then
    echo "the protocol core was imported from $imported, not the unpacked wheel's extension modules" >&2
    exit 1
fi
if [ $# -eq 0 ]; then tests="the whole test suite"; else tests="pytest $*"; fi
"$PYTHON" -m pytest -q -p no:cacheprovider "$@"
step "$tests passed against it"
"$PYTHON" tests/conformance/run.py
step "the conformance suite passed against it"
echo "$(basename "$wheel"): $shown; $tests and the conformance suite pass (${SECONDS}s)"
