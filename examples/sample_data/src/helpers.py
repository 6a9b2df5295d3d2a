"""Helpers shared by the inventory code."""


def format_price(value: float) -> str:
    return f"${value:,.2f}"


def parse_quantity(text: str) -> int:
    quantity = int(text)
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    return quantity
