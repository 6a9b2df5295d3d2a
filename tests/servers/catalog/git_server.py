"""A git server of the search catalog (tests/test_search.py): the usual version-control commands."""

from __future__ import annotations

from toolwire import Server

server = Server("git", "1.0.0")


@server.tool(read_only=True)
def git_status(repo: str = ".") -> str:
    """Show the working tree status: modified, staged and untracked files.

    Args:
        repo: Path of the repository.
    """
    return "nothing to commit, working tree clean"


@server.tool(read_only=True)
def git_diff(repo: str = ".", staged: bool = False, path: str | None = None) -> str:
    """Show changes between the working tree and the last commit, line by line.

    Args:
        repo: Path of the repository.
        staged: Show the changes staged for the next commit instead.
        path: Limit the diff to this file.
    """
    return "diff --git a/x b/x"


@server.tool()
def git_commit(message: str, repo: str = ".", all_changes: bool = False) -> str:
    """Record staged changes in the repository with a commit message.

    Args:
        message: The commit message.
        repo: Path of the repository.
        all_changes: Stage every modified tracked file first.
    """
    return "[main 1a2b3c4] " + message


@server.tool(read_only=True)
def git_log(repo: str = ".", max_count: int = 10, author: str | None = None) -> list[str]:
    """Show the commit history of the current branch, newest first.

    Args:
        repo: Path of the repository.
        max_count: How many commits to show.
        author: Only commits by this author.
    """
    return ["1a2b3c4 first commit"]


@server.tool()
def git_create_branch(name: str, start_point: str = "HEAD", repo: str = ".") -> str:
    """Create a new branch and switch to it.

    Args:
        name: Name of the new branch.
        start_point: Commit or branch the new branch starts from.
        repo: Path of the repository.
    """
    return f"switched to a new branch {name!r}"


@server.tool()
def git_checkout(ref: str, repo: str = ".") -> str:
    """Switch the working tree to another branch, tag or commit.

    Args:
        ref: Branch, tag or commit to check out.
        repo: Path of the repository.
    """
    return f"switched to {ref}"


@server.tool()
def git_push(remote: str = "origin", branch: str | None = None, repo: str = ".") -> str:
    """Upload local commits to a remote repository.

    Args:
        remote: Name of the remote.
        branch: Branch to push (default: the current one).
        repo: Path of the repository.
    """
    return f"pushed to {remote}"


@server.tool()
def git_pull(remote: str = "origin", rebase: bool = False, repo: str = ".") -> str:
    """Fetch commits from a remote and merge them into the current branch.

    Args:
        remote: Name of the remote.
        rebase: Rebase local commits instead of merging.
        repo: Path of the repository.
    """
    return "already up to date"


@server.tool(read_only=True)
def git_blame(path: str, repo: str = ".") -> str:
    """Show which commit and author last changed each line of a file.

    Args:
        path: The file to annotate.
        repo: Path of the repository.
    """
    return f"1a2b3c4 (ada) {path}"
