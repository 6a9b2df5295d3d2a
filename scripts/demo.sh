#!/usr/bin/env bash
# Set everything up, then run the demo: the seed example server driven end to end over stdio.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/python examples/demo.py "$@"
