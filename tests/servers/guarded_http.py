"""The library server over HTTP with small limits, for the hostile-client tests.

python guarded_http.py PORT [RUNNER]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from library import server

from toolwire.transports.http.serve import run_http

run_http(
    server,
    port=int(sys.argv[1]),
    runner=sys.argv[2] if len(sys.argv) > 2 else "uvicorn",
    header_timeout=1.0,
    max_connections=40,
    body_timeout=1.0,
    max_sessions=30,
    max_sessions_per_client=5,
    max_streams_per_client=2,
)
