"""A local stand-in for the Open-Meteo weather and geocoding APIs, for the demo and tests.

    with WeatherStub() as stub:
        os.environ["TOOLWIRE_WEATHER_URL"] = stub.url
        os.environ["TOOLWIRE_GEOCODING_URL"] = stub.url

Serves ``/v1/search?name=...`` (geocoding) and ``/v1/forecast?...`` (current conditions) on
an ephemeral port of 127.0.0.1, with fixed answers for a few cities. Unknown names find
nothing, as Open-Meteo does; a few names fail on purpose, to show how the tools report it:
``Erroring`` (HTTP 503), ``Garbled`` (not JSON), ``Halfway`` (a forecast missing fields),
``Nanville`` (NaN, which is not JSON) and ``Oddville`` (a weather code no table knows).
Every request is recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlparse

#: name -> (latitude, longitude, temperature, humidity, WMO weather code)
CITIES = {
    "new york": (40.71, -74.01, 22.5, 65, 2),
    "paris": (48.85, 2.35, 18.0, 72, 3),
    "beijing": (39.90, 116.40, 26.1, 40, 0),
    "oddville": (10.0, 10.0, -3.25, 90, 42),
    "nanville": (20.0, 20.0, float("nan"), 50, 0),  # json.dumps writes NaN
}


class WeatherStub:
    """The stub server; it listens from construction until :meth:`close`."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {key: values[0] for key, values in parse_qs(url.query).items()}
                stub.requests.append((url.path, query))
                if url.path == "/v1/search":
                    self._search(query.get("name", ""))
                elif url.path == "/v1/forecast":
                    self._forecast(float(query.get("latitude", "nan")))
                else:
                    self.send_error(404)

            def _search(self, name: str) -> None:
                if name == "Erroring":
                    self.send_error(503, "down for maintenance")
                elif name == "Garbled":
                    self._answer(b"<html>not json</html>")
                elif name == "Halfway":
                    self._json({"results": [{"name": "Halfway", "latitude": 1.0, "longitude": 1.0}]})
                elif name.lower() in CITIES:
                    latitude, longitude, *_ = CITIES[name.lower()]
                    self._json({"results": [{"name": name.title(), "latitude": latitude, "longitude": longitude}]})
                else:  # Open-Meteo leaves "results" out when nothing matches
                    self._json({"generationtime_ms": 0.1})

            def _forecast(self, latitude: float) -> None:
                found = [city for city in CITIES.values() if abs(city[0] - latitude) < 0.001]
                if not found:
                    self._json({"current": {"temperature_2m": 1.0}})
                    return
                _, _, temperature, humidity, code = found[0]
                current = {"temperature_2m": temperature, "relative_humidity_2m": humidity, "weather_code": code}
                self._json({"current": current})

            def _json(self, body: Any) -> None:
                self._answer(json.dumps(body).encode())

            def _answer(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        return Handler

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> WeatherStub:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
