"""A weather server of the search catalog (tests/test_search.py): conditions, forecasts, alerts."""

from __future__ import annotations

from toolwire import Server

server = Server("weather", "1.0.0")


@server.tool(read_only=True)
def current_weather(city: str, units: str = "metric") -> str:
    """Current weather conditions for a city: temperature, wind, humidity, sky.
    实时天气：温度、风力、湿度。

    Args:
        city: City name, such as Paris or 北京.
        units: metric or imperial.
    """
    return f"{city}: 18 °C, cloudy"


@server.tool(read_only=True)
def weather_forecast(city: str, days: int = 5) -> list[str]:
    """Daily weather forecast for the next days: highs, lows and chance of rain.
    未来几天的天气预报。

    Args:
        city: City name.
        days: How many days ahead (1 to 14).
    """
    return ["Mon 20/12 rain 60%"]


@server.tool(read_only=True)
def hourly_forecast(city: str, hours: int = 24) -> list[str]:
    """Hour-by-hour forecast of temperature and precipitation.

    Args:
        city: City name.
        hours: How many hours ahead.
    """
    return ["14:00 19 °C"]


@server.tool(read_only=True)
def weather_alerts(region: str) -> list[str]:
    """Active severe weather warnings for a region: storms, floods, heat waves.
    气象预警。

    Args:
        region: Region or city.
    """
    return []


@server.tool(read_only=True)
def air_quality(city: str) -> dict[str, object]:
    """Air quality index and pollution levels (PM2.5, ozone) for a city.
    空气质量指数。

    Args:
        city: City name.
    """
    return {"aqi": 42}


@server.tool(read_only=True)
def historical_weather(city: str, date: str) -> str:
    """Weather observed on a past date.

    Args:
        city: City name.
        date: The day, YYYY-MM-DD.
    """
    return f"{city} {date}: 12 °C"


@server.tool(read_only=True)
def sunrise_sunset(city: str, date: str | None = None) -> dict[str, str]:
    """Sunrise and sunset times for a place and day.

    Args:
        city: City name.
        date: The day (default: today).
    """
    return {"sunrise": "07:31", "sunset": "17:02"}


@server.tool(read_only=True)
def uv_index(city: str) -> int:
    """Today's ultraviolet (UV) index and sunburn risk.

    Args:
        city: City name.
    """
    return 3
