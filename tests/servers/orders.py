"""A server for code mode's tests and benchmark: a task of five chained calls (a customer by
name, their orders, each order's total) and one that changes something, audited to the file
$AUDIT_FILE names (when set)."""

from __future__ import annotations

import os

from toolwire import Server, ToolError
from toolwire.guards import Audit

audit = os.environ.get("AUDIT_FILE")
server = Server("orders", guards=[Audit(audit)] if audit else [])
CUSTOMERS = {"Ada": 7, "Lin": 8}
ORDERS = {7: [101, 102, 103], 8: [201]}
TOTALS = {101: 12.5, 102: 30.0, 103: 7.25, 201: 99.0}


@server.tool(read_only=True)
def find_customer(name: str) -> dict[str, int]:
    """The id of the customer called ``name``."""
    if name not in CUSTOMERS:
        raise ToolError(f"no customer is called {name!r}")
    return {"customer_id": CUSTOMERS[name]}


@server.tool(read_only=True)
def list_orders(customer_id: int) -> dict[str, list[int]]:
    """The ids of a customer's orders."""
    return {"order_ids": ORDERS.get(customer_id, [])}


@server.tool(read_only=True)
def order_total(order_id: int) -> dict[str, float]:
    """The total of one order, in euros."""
    return {"total": TOTALS[order_id]}


@server.tool(destructive=True)
def cancel_order(order_id: int, reason: str = "") -> str:
    """Cancel an order."""
    return f"order {order_id} cancelled"
