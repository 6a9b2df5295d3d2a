"""An email server of the search catalog (tests/test_search.py): send, read and organise mail."""

from __future__ import annotations

from toolwire import Server

server = Server("mail", "1.0.0")


@server.tool()
def send_email(to: list[str], subject: str, body: str, cc: list[str] | None = None) -> str:
    """Send an email message.

    Args:
        to: Recipient addresses.
        subject: Subject line.
        body: Message text.
        cc: Addresses that receive a copy.
    """
    return f"sent {subject!r}"


@server.tool(read_only=True)
def search_emails(query: str, folder: str = "inbox", unread_only: bool = False, limit: int = 20) -> list[str]:
    """Search the mailbox for messages by sender, subject or words in the body.

    Args:
        query: Words, or filters such as from:ada subject:invoice.
        folder: Mailbox folder to search.
        unread_only: Only messages not read yet.
        limit: Most messages to return.
    """
    return ["msg-1"]


@server.tool(read_only=True)
def read_email(message_id: str) -> str:
    """Read the full text of one email message, with its headers.

    Args:
        message_id: The message.
    """
    return f"From: ada\n\n{message_id}"


@server.tool()
def reply_to_email(message_id: str, body: str, reply_all: bool = False) -> str:
    """Reply to an email message.

    Args:
        message_id: The message to answer.
        body: Text of the reply.
        reply_all: Answer every recipient, not only the sender.
    """
    return f"replied to {message_id}"


@server.tool()
def forward_email(message_id: str, to: list[str], note: str = "") -> str:
    """Forward an email message to other recipients.

    Args:
        message_id: The message to forward.
        to: Recipient addresses.
        note: Text added above the forwarded message.
    """
    return f"forwarded {message_id}"


@server.tool()
def create_draft(to: list[str], subject: str, body: str) -> str:
    """Save an email as a draft to finish and send later.

    Args:
        to: Recipient addresses.
        subject: Subject line.
        body: Message text.
    """
    return "draft-1"


@server.tool()
def move_email(message_id: str, folder: str) -> str:
    """Move a message to another folder, such as archive or spam.

    Args:
        message_id: The message.
        folder: Destination folder.
    """
    return f"moved {message_id} to {folder}"


@server.tool()
def mark_as_read(message_ids: list[str], read: bool = True) -> str:
    """Mark messages as read or unread.

    Args:
        message_ids: The messages.
        read: False marks them unread.
    """
    return f"marked {len(message_ids)}"


@server.tool(read_only=True)
def download_attachment(message_id: str, attachment_name: str) -> str:
    """Download a file attached to an email message.

    Args:
        message_id: The message.
        attachment_name: File name of the attachment.
    """
    return f"saved {attachment_name}"
