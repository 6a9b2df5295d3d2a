"""How long an OpenAPI document takes to map: GitHub's REST description (1,000+ operations) by default.

    python benchmarks/openapi_load.py [DOCUMENT] [--runs N] [--instructions] [--json]

DOCUMENT is a JSON file (``.json`` or ``.json.gz``); by default the copy of GitHub's REST
description the tests ship (tests/openapi/data/api.github.com.json.gz). The document is read
once; ``map_document`` then runs N times (5 by default) and the fastest run is reported (the
others were slowed by whatever else ran), with the operations it gave and the time per
operation. Reading the JSON is timed apart: it is the same for any reader of the document.

``--instructions`` counts instead, under callgrind (``valgrind --tool=callgrind``), the
instructions of one mapping: a child reads the document and maps it, another only reads it,
and the difference is the mapping's. The count repeats to the last digit where times swing
by tens of per cent on a shared host.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
GITHUB = ROOT / "tests" / "openapi" / "data" / "api.github.com.json.gz"


def read(path: Path) -> Any:
    import orjson

    data = path.read_bytes()
    return orjson.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def timed(path: Path, runs: int) -> dict[str, Any]:
    """The fastest of ``runs`` mappings of the document at ``path``, and its reading."""
    from toolwire.openapi import map_document

    started = time.perf_counter()
    document = read(path)
    reading = time.perf_counter() - started
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        mapped = map_document(document)
        best = min(best, time.perf_counter() - started)
    operations = len(mapped.operations)
    return {
        "document": path.name,
        "operations": operations,
        "skipped": len(mapped.skipped),
        "read_ms": round(reading * 1000, 1),
        "map_ms": round(best * 1000, 1),
        "map_us_per_operation": round(best * 1e6 / max(operations, 1), 1),
    }


def instructions(path: Path) -> dict[str, Any]:
    """The instructions of one mapping of the document at ``path``, counted under callgrind."""
    import callgrind

    callgrind.prepare()
    script = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as folder:
        reading = callgrind.count(Path(folder) / "read.out", [script, str(path), "--child", "read"])
        mapping = callgrind.count(Path(folder) / "map.out", [script, str(path), "--child", "map"])
    return {"document": path.name, "map_instructions": mapping - reading}


def child(path: Path, what: str) -> None:
    """What a counted child does: read the document, then map it (``map``) or not (``read``)."""
    from toolwire.openapi import map_document  # imported by both: only the mapping differs

    document = read(path)
    if what == "map":
        map_document(document)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("document", nargs="?", type=Path, default=GITHUB)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--child", choices=("read", "map"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.document, options.child)
        return
    results = instructions(options.document) if options.instructions else timed(options.document, options.runs)
    if options.json:
        print(json.dumps(results))
    else:
        for key, value in results.items():
            print(f"{key:>22}: {value:,}" if isinstance(value, int | float) else f"{key:>22}: {value}")


if __name__ == "__main__":
    main()
