#!/usr/bin/env bash
# Build toolwire's pure-Python wheel from this tree (TOOLWIRE_COMPILE=0; the compiled one is
# scripts/compiled-check.sh's), install it with the [chat] extra into a fresh venv
# (dependencies from pip's cache or the package index), and run the installed command:
# `toolwire --version` must print this tree's version and say it is pure Python, and
# `toolwire tools` must list the seed example's tools. Run from scripts/test.sh; usable alone.
set -euo pipefail
cd "$(dirname "$0")/.."
unset PYTHONPATH   # the installed wheel is what runs, not this tree's src
PYTHON="${PYTHON:-.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/tree"
cp -r pyproject.toml README.md setup.py src "$work/tree/"   # a copy: no build/ or egg-info left here
find "$work/tree" -name __pycache__ -prune -exec rm -rf {} +
TOOLWIRE_COMPILE=0 "$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/tree"
wheel="$(ls "$work"/dist/toolwire-*-py3-none-any.whl)"
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[chat]"
version="$("$PYTHON" -c 'import ast, sys; tree = ast.parse(open("src/toolwire/__init__.py").read()); print(next(node.value.value for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id == "__version__"))')"
shown="$(cd "$work" && "$work/venv/bin/toolwire" --version)"
if [ "$shown" != "toolwire $version (pure Python)" ]; then
    echo "the installed wheel says '$shown', not 'toolwire $version (pure Python)'" >&2
    exit 1
fi
listed="$("$work/venv/bin/toolwire" tools examples/seed_server.py)"
for tool in get_weather calculate_sum; do
    if ! grep -q "$tool" <<<"$listed"; then
        echo "the installed wheel's \`toolwire tools examples/seed_server.py\` does not list $tool:" >&2
        echo "$listed" >&2
        exit 1
    fi
done
echo "$(basename "$wheel"): installed with [chat], $shown, lists the seed example's tools"
