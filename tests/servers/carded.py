"""A server that publishes its card (SEP-2127), for the server card tests."""

from __future__ import annotations

from toolwire import Server
from toolwire.cards import ServerCards

server = Server("com.example/weather", "1.4.2", title="Weather", instructions="Forecasts and alerts for any city.")


@server.tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"Sunny in {city}"


server.add_extension(
    ServerCards(
        website_url="https://weather.example.com",
        repository="https://github.com/example/weather",
        icons=[{"src": "https://weather.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        headers=[{"name": "X-Units", "description": "metric or imperial", "choices": ["metric", "imperial"]}],
    )
)
