"""A payments server of the search catalog (tests/test_search.py): charges, refunds, invoices."""

from __future__ import annotations

from toolwire import Server

server = Server("payments", "1.0.0")


@server.tool()
def create_payment(amount_cents: int, currency: str, customer_id: str, description: str = "") -> str:
    """Charge a customer's saved card.

    Args:
        amount_cents: Amount in the smallest currency unit.
        currency: ISO code such as EUR.
        customer_id: The customer.
        description: Shown on the statement.
    """
    return "pay_1"


@server.tool(destructive=True)
def refund_payment(payment_id: str, amount_cents: int | None = None, reason: str = "") -> str:
    """Refund a payment to the customer, in full or in part.

    Args:
        payment_id: The payment.
        amount_cents: Part to refund (default: all of it).
        reason: Why.
    """
    return "re_1"


@server.tool(read_only=True)
def list_transactions(since: str | None = None, status: str | None = None, limit: int = 25) -> list[str]:
    """List recent payments and charges with their status.

    Args:
        since: Only after this date.
        status: succeeded, pending or failed.
        limit: How many.
    """
    return ["pay_1 succeeded"]


@server.tool()
def create_invoice(customer_id: str, items: list[str], due_days: int = 30) -> str:
    """Create an invoice for a customer and email it to them.

    Args:
        customer_id: The customer billed.
        items: Line items, 'description: amount'.
        due_days: Days until payment is due.
    """
    return "in_1"


@server.tool(read_only=True)
def get_balance() -> dict[str, int]:
    """The account balance: funds available and pending payouts."""
    return {"available": 1000}


@server.tool()
def create_customer(name: str, email: str) -> str:
    """Add a new customer record for billing.

    Args:
        name: Customer's name.
        email: Customer's email address.
    """
    return "cus_1"


@server.tool()
def create_subscription(customer_id: str, plan: str) -> str:
    """Subscribe a customer to a recurring plan (monthly or yearly billing).

    Args:
        customer_id: The customer.
        plan: Plan id.
    """
    return "sub_1"


@server.tool(destructive=True)
def cancel_subscription(subscription_id: str, at_period_end: bool = True) -> str:
    """Cancel a customer's recurring subscription.

    Args:
        subscription_id: The subscription.
        at_period_end: Keep it until the paid period ends.
    """
    return "cancelled"


@server.tool(read_only=True)
def exchange_rate(from_currency: str, to_currency: str) -> float:
    """Currency conversion rate between two currencies.

    Args:
        from_currency: ISO code.
        to_currency: ISO code.
    """
    return 1.08
