"""A small inventory model."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    quantity: int
    price: float


class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        # TODO: merge quantities when the item already exists
        self.items[item.name] = item

    def total_value(self) -> float:
        return sum(item.quantity * item.price for item in self.items.values())
