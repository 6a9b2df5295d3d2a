"""A local stand-in for the Open-Meteo weather and geocoding APIs, for the demo and tests.

    with WeatherStub() as stub:
        os.environ["TOOLWIRE_WEATHER_URL"] = stub.url
        os.environ["TOOLWIRE_GEOCODING_URL"] = stub.url

Serves ``/v1/search?name=...`` (geocoding) and ``/v1/forecast?...`` (current conditions) on
127.0.0.1 with fixed answers for a few cities; unknown names find nothing.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlparse

CITIES = {
    "new york": (40.71, -74.01, 22.5, 65, 2),
    "paris": (48.85, 2.35, 18.0, 72, 3),
    "beijing": (39.90, 116.40, 26.1, 40, 0),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if url.path == "/v1/search":
            city = CITIES.get(query.get("name", "").lower())
            body: dict[str, object] = {}
            if city:
                body = {"results": [{"name": query["name"], "latitude": city[0], "longitude": city[1]}]}
        elif url.path == "/v1/forecast":
            found = [c for c in CITIES.values() if abs(c[0] - float(query.get("latitude", 0))) < 0.01]
            if not found:
                self.send_error(400, "unknown coordinates")
                return
            _, _, temperature, humidity, code = found[0]
            body = {"current": {"temperature_2m": temperature, "relative_humidity_2m": humidity, "weather_code": code}}
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


class WeatherStub:
    """The stub server, listening on an ephemeral port of 127.0.0.1 while in use."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> WeatherStub:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
