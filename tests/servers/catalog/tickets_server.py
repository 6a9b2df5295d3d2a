"""An issue tracker of the search catalog (tests/test_search.py): tickets, comments, sprints."""

from __future__ import annotations

from toolwire import Server

server = Server("tickets", "1.0.0")


@server.tool()
def create_issue(project: str, title: str, description: str = "", priority: str = "medium") -> str:
    """Open a new issue (bug report or feature request) in the tracker.

    Args:
        project: Project key, such as WEB.
        title: One-line summary.
        description: Details, steps to reproduce.
        priority: low, medium, high or critical.
    """
    return "WEB-101"


@server.tool(read_only=True)
def get_issue(issue_key: str) -> dict[str, object]:
    """Show one issue with its status, assignee, description and comments.

    Args:
        issue_key: Such as WEB-101.
    """
    return {"key": issue_key, "status": "open"}


@server.tool(read_only=True)
def search_issues(query: str = "", status: str | None = None, assignee: str | None = None) -> list[str]:
    """Find issues by text, status or assignee.

    Args:
        query: Words in the title or description.
        status: open, in progress or closed.
        assignee: Username the issues are assigned to.
    """
    return ["WEB-101"]


@server.tool()
def update_issue_status(issue_key: str, status: str) -> str:
    """Move an issue to another status: in progress, in review, done or closed.

    Args:
        issue_key: The issue.
        status: The new status.
    """
    return f"{issue_key}: {status}"


@server.tool()
def assign_issue(issue_key: str, assignee: str) -> str:
    """Assign an issue to a person.

    Args:
        issue_key: The issue.
        assignee: Username who will work on it.
    """
    return f"{issue_key} -> {assignee}"


@server.tool()
def add_comment(issue_key: str, text: str) -> str:
    """Add a comment to an issue.

    Args:
        issue_key: The issue.
        text: The comment.
    """
    return "comment added"


@server.tool(read_only=True)
def list_sprints(project: str, active_only: bool = True) -> list[str]:
    """List the sprints of a project board.

    Args:
        project: Project key.
        active_only: Only the running sprint.
    """
    return ["Sprint 12"]


@server.tool()
def link_issues(issue_key: str, other_key: str, relation: str = "relates to") -> str:
    """Link two issues: blocks, is blocked by, duplicates, relates to.

    Args:
        issue_key: The first issue.
        other_key: The second issue.
        relation: How they relate.
    """
    return "linked"
