"""A maps server of the search catalog (tests/test_search.py): places, routes, distances."""

from __future__ import annotations

from toolwire import Server

server = Server("maps", "1.0.0")


@server.tool(read_only=True)
def geocode(address: str) -> dict[str, float]:
    """Convert a street address into latitude and longitude coordinates.

    Args:
        address: The address.
    """
    return {"lat": 48.85, "lng": 2.35}


@server.tool(read_only=True)
def reverse_geocode(latitude: float, longitude: float) -> str:
    """Find the address of a point given by its coordinates.

    Args:
        latitude: Degrees north.
        longitude: Degrees east.
    """
    return "1 rue de Rivoli, Paris"


@server.tool(read_only=True)
def get_directions(origin: str, destination: str, mode: str = "driving") -> list[str]:
    """Route and turn-by-turn directions from one place to another.

    Args:
        origin: Starting address or place.
        destination: Where to go.
        mode: driving, walking, cycling or transit.
    """
    return ["Head north"]


@server.tool(read_only=True)
def search_places(query: str, near: str, radius_meters: int = 1000) -> list[str]:
    """Find nearby places such as restaurants, cafés, pharmacies or petrol stations.

    Args:
        query: What to look for.
        near: Address or place to search around.
        radius_meters: Search radius.
    """
    return ["Café de Flore"]


@server.tool(read_only=True)
def distance_matrix(origins: list[str], destinations: list[str], mode: str = "driving") -> list[list[int]]:
    """Travel distance and time between several origins and destinations.

    Args:
        origins: Starting places.
        destinations: End places.
        mode: driving, walking, cycling or transit.
    """
    return [[1200]]


@server.tool(read_only=True)
def place_details(place_id: str) -> dict[str, object]:
    """Opening hours, phone number, rating and reviews of a place.

    Args:
        place_id: The place.
    """
    return {"rating": 4.5}


@server.tool(read_only=True)
def timezone_of_location(latitude: float, longitude: float) -> str:
    """The time zone and local time at a location.

    Args:
        latitude: Degrees north.
        longitude: Degrees east.
    """
    return "Europe/Paris"


@server.tool(read_only=True)
def traffic_conditions(area: str) -> str:
    """Current traffic congestion and incidents on roads in an area.

    Args:
        area: City or road.
    """
    return "light traffic"
