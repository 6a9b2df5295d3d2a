"""A calendar server of the search catalog (tests/test_search.py): events, invitations, free time."""

from __future__ import annotations

from toolwire import Server

server = Server("calendar", "1.0.0")


@server.tool()
def create_event(title: str, start: str, end: str, attendees: list[str] | None = None, location: str = "") -> str:
    """Schedule a new event or meeting in the calendar.

    Args:
        title: What the event is called.
        start: Start time, ISO 8601.
        end: End time, ISO 8601.
        attendees: Email addresses of the people invited.
        location: Room or address.
    """
    return f"created {title!r}"


@server.tool(read_only=True)
def list_events(start: str, end: str, calendar_id: str = "primary") -> list[str]:
    """List the events between two dates, such as today's agenda.

    Args:
        start: Beginning of the period, ISO 8601.
        end: End of the period, ISO 8601.
        calendar_id: Which calendar to read.
    """
    return ["09:00 stand-up"]


@server.tool()
def update_event(event_id: str, start: str | None = None, end: str | None = None, title: str | None = None) -> str:
    """Change an existing event: move it to another time or rename it.

    Args:
        event_id: The event to change.
        start: New start time.
        end: New end time.
        title: New title.
    """
    return f"updated {event_id}"


@server.tool(destructive=True)
def cancel_event(event_id: str, notify_attendees: bool = True) -> str:
    """Cancel an event and remove it from the calendar.

    Args:
        event_id: The event to cancel.
        notify_attendees: Send a cancellation notice to the guests.
    """
    return f"cancelled {event_id}"


@server.tool(read_only=True)
def find_free_slots(attendees: list[str], duration_minutes: int, within_days: int = 7) -> list[str]:
    """Find times when all the given people are available for a meeting.

    Args:
        attendees: Email addresses of the people who must attend.
        duration_minutes: Length of the meeting.
        within_days: How many days ahead to look.
    """
    return ["2026-03-02T10:00"]


@server.tool()
def respond_to_invitation(event_id: str, response: str) -> str:
    """Accept, decline or tentatively accept a meeting invitation.

    Args:
        event_id: The invitation's event.
        response: 'accepted', 'declined' or 'tentative'.
    """
    return f"{response} {event_id}"


@server.tool()
def set_reminder(event_id: str, minutes_before: int = 10) -> str:
    """Add a reminder notification before an event starts.

    Args:
        event_id: The event.
        minutes_before: How long before the start to remind.
    """
    return f"reminder {minutes_before} min before {event_id}"


@server.tool(read_only=True)
def list_calendars() -> list[str]:
    """List the calendars the account can see (personal, shared, holidays)."""
    return ["primary"]
