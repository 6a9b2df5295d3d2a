"""A team chat server of the search catalog (tests/test_search.py): channels, messages, status."""

from __future__ import annotations

from toolwire import Server

server = Server("chat", "1.0.0")


@server.tool()
def post_message(channel: str, text: str, thread_id: str | None = None) -> str:
    """Post a message to a team chat channel.

    Args:
        channel: Channel name, such as #general.
        text: The message.
        thread_id: Reply in this thread instead of the channel.
    """
    return f"posted in {channel}"


@server.tool(read_only=True)
def list_channels(include_archived: bool = False) -> list[str]:
    """List the chat channels of the workspace.

    Args:
        include_archived: Include channels no longer in use.
    """
    return ["#general"]


@server.tool(read_only=True)
def read_channel_history(channel: str, limit: int = 50) -> list[str]:
    """Read the latest messages of a channel.

    Args:
        channel: Channel name.
        limit: How many messages.
    """
    return ["ada: hello"]


@server.tool()
def send_direct_message(user: str, text: str) -> str:
    """Send a private direct message to one person in the workspace.

    Args:
        user: Username or display name.
        text: The message.
    """
    return f"sent to {user}"


@server.tool()
def add_reaction(channel: str, message_id: str, emoji: str) -> str:
    """React to a chat message with an emoji.

    Args:
        channel: Channel of the message.
        message_id: The message.
        emoji: Emoji name, such as thumbsup.
    """
    return f"reacted {emoji}"


@server.tool()
def create_channel(name: str, private: bool = False, members: list[str] | None = None) -> str:
    """Create a new chat channel and invite members.

    Args:
        name: Channel name.
        private: Only invited members can see it.
        members: Usernames to invite.
    """
    return f"created #{name}"


@server.tool()
def set_status(text: str, emoji: str = "", expires_in_minutes: int | None = None) -> str:
    """Set your chat status, such as 'in a meeting' or 'on vacation'.

    Args:
        text: Status text.
        emoji: Status emoji.
        expires_in_minutes: Clear the status after this long.
    """
    return "status set"


@server.tool(read_only=True)
def search_messages(query: str, channel: str | None = None) -> list[str]:
    """Search chat messages across channels for words or a person.

    Args:
        query: Words to look for.
        channel: Only this channel.
    """
    return ["#general ada: release today"]
