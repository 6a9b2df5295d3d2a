"""A file system server of the search catalog (tests/test_search.py): read, write and find files."""

from __future__ import annotations

from toolwire import Server

server = Server("files", "1.0.0")


@server.tool(read_only=True)
def read_file(path: str, encoding: str = "utf-8") -> str:
    """Read the contents of a text file.

    Args:
        path: Absolute or workspace-relative path of the file.
        encoding: Text encoding used to decode the bytes.
    """
    return f"contents of {path}"


@server.tool()
def write_file(path: str, content: str, overwrite: bool = False) -> str:
    """Create a file or replace its contents with the given text.

    Args:
        path: Where to write the file.
        content: Text to store in the file.
        overwrite: Replace an existing file instead of failing.
    """
    return f"wrote {len(content)} characters to {path}"


@server.tool(read_only=True)
def list_directory(path: str = ".", show_hidden: bool = False) -> list[str]:
    """List the files and subdirectories in a directory.

    Args:
        path: Directory to list.
        show_hidden: Include entries whose name starts with a dot.
    """
    return [f"{path}/a.txt"]


@server.tool(read_only=True)
def search_files(pattern: str, root: str = ".", max_results: int = 50) -> list[str]:
    """Find files whose names match a glob pattern, searching subdirectories recursively.

    Args:
        pattern: Glob such as '*.py' or 'report-*.pdf'.
        root: Directory where the search starts.
        max_results: Stop after this many matches.
    """
    return [f"{root}/{pattern}"]


@server.tool(read_only=True)
def grep_text(query: str, root: str = ".", case_sensitive: bool = False) -> list[str]:
    """Search inside files for lines containing a string or regular expression.

    Args:
        query: Text or regular expression to look for.
        root: Directory whose files are searched.
        case_sensitive: Match letter case exactly.
    """
    return [f"{root}/notes.txt:3: {query}"]


@server.tool(destructive=True)
def delete_file(path: str) -> str:
    """Delete a file permanently.

    Args:
        path: The file to remove.
    """
    return f"deleted {path}"


@server.tool()
def move_file(source: str, destination: str) -> str:
    """Move or rename a file or directory.

    Args:
        source: Current path.
        destination: New path.
    """
    return f"moved {source} to {destination}"


@server.tool()
def copy_file(source: str, destination: str) -> str:
    """Copy a file to a new location.

    Args:
        source: File to copy.
        destination: Path of the copy.
    """
    return f"copied {source} to {destination}"


@server.tool(read_only=True)
def file_info(path: str) -> dict[str, object]:
    """Show metadata of a file: size in bytes, modification time and permissions.

    Args:
        path: The file to inspect.
    """
    return {"path": path, "size": 120}
