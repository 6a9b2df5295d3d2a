"""An upstream of the gateway's end-to-end policy tests: ``team.py files`` serves a shared
folder's tools, ``team.py github`` an issue tracker's (one of them destructive)."""

import sys

from toolwire import Server

kind = sys.argv[1]
server = Server(f"team-{kind}")

if kind == "files":

    @server.tool
    def read_file(path: str) -> str:
        """Read a file of the shared folder."""
        return f"read {path}"

else:

    @server.tool
    def create_issue(title: str) -> str:
        """Open an issue."""
        return f"opened {title!r}"

    @server.tool(destructive=True)
    def delete_repo(name: str) -> str:
        """Delete a repository for good, with its issues and history."""
        return f"deleted {name}"


if __name__ == "__main__":
    server.run()
