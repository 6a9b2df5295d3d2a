"""The library server over HTTP with small limits, for the hostile-client tests.

python guarded_http.py PORT [RUNNER] [OPTION=VALUE ...]

``OPTION=VALUE`` pairs set (or override) ``run_http`` options: numbers are read as numbers.
"""

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from library import server

from toolwire.transports.http.serve import run_http


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


options: dict[str, Any] = {
    "header_timeout": 1.0,
    "max_connections": 40,
    "body_timeout": 1.0,
    "max_sessions": 30,
    "max_sessions_per_client": 5,
    "max_streams_per_client": 2,
}
options.update((key, _value(value)) for key, _, value in (word.partition("=") for word in sys.argv[3:]))
run_http(server, port=int(sys.argv[1]), runner=sys.argv[2] if len(sys.argv) > 2 else "uvicorn", **options)
