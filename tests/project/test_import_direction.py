"""Imports point down (docs/DESIGN "Layers"): the protocol package imports nothing else of
toolwire, and code a client runs loads no server package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.httpserve import SERVERS, toolwire_http

SRC = Path(__file__).resolve().parents[2] / "src" / "toolwire"


def imported(path: Path) -> set[str]:
    """Every toolwire module that ``path`` names in an import, at any depth (also under
    ``TYPE_CHECKING`` and inside functions), as a dotted name."""
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.name.split(".")[0] == "toolwire")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
                if node.module is None:
                    names.update(f"{base}.{alias.name}" for alias in node.names)
                    continue
            else:
                module = node.module or ""
            if module.split(".")[0] == "toolwire":
                names.add(module)
    return names


def imports_under(folder: str) -> dict[str, set[str]]:
    return {str(path.relative_to(SRC)): imported(path) for path in sorted((SRC / folder).rglob("*.py"))}


def test_protocol_imports_nothing_else_of_toolwire() -> None:
    for path, names in imports_under("protocol").items():
        outside = {name for name in names if not name.startswith("toolwire.protocol")}
        assert not outside, f"protocol/{path} imports {sorted(outside)}"


def run(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True)


def test_protocol_at_work_loads_nothing_else() -> None:
    run(
        "import sys\n"
        "from toolwire.protocol.codec import codec_for\n"
        "from toolwire.protocol.connection import ServerConnection\n"
        "class Task:\n"
        "    id = 't'; status = 'working'; message = None; created = updated = 0.0\n"
        "    ttl_ms = None; poll_ms = 1000; inputs = result = error = None\n"
        "codec_for('2025-11-25').task(Task())\n"
        "loaded = {m for m in sys.modules if m.startswith('toolwire.') and not m.startswith('toolwire.protocol')}\n"
        "assert not loaded, loaded\n"
    )


SERVER_SIDE = ("toolwire.server", "toolwire.guards", "toolwire.transports", "toolwire.auth.server")

CLIENT_RUN = """
import asyncio, sys
from toolwire.client import Client

async def main(target):
    async with Client(target) as client:
        await client.list_tools()
        await client.call_tool("echo", {"text": "hi"})

asyncio.run(main(sys.argv[1] if sys.argv[1].startswith("http") else sys.argv[1:]))
from toolwire.logs import get_logger
get_logger("toolwire.client").warning("what the client logs is redacted: token=abc1")
loaded = sorted(m for m in sys.modules if m.startswith(%r))
assert not loaded, loaded
assert "toolwire.client.http" in sys.modules or not sys.argv[1].startswith("http")
"""


def run_client(*target: str) -> None:
    subprocess.run([sys.executable, "-c", CLIENT_RUN % (SERVER_SIDE,), *target], check=True, cwd=SRC.parent.parent)


def test_a_client_over_stdio_loads_no_server_package() -> None:
    run_client(sys.executable, "-m", "toolwire", "run", str(SERVERS / "basic.py"))


def test_a_client_over_http_loads_no_server_package() -> None:
    with toolwire_http(str(SERVERS / "basic.py")) as (url, _):
        run_client(url)


def test_the_auth_client_side_imports_nothing_of_the_server_side() -> None:
    for path, names in imports_under("auth/client").items():
        server = {name for name in names if name.startswith("toolwire.auth.server")}
        assert not server, f"auth/client/{path} imports {sorted(server)}"
    for path, names in imports_under("auth/server").items():
        client = {name for name in names if name.startswith("toolwire.auth.client")}
        assert not client, f"auth/server/{path} imports {sorted(client)}"


def test_the_terminal_commands_import_only_what_the_command_line_shares() -> None:
    """``toolwire.cli`` imports the terminal's commands (when one is the command): they
    import back only ``cli.common``, which imports neither them nor the other commands."""
    for path, names in imports_under("terminal").items():
        cli = {name for name in names if name == "toolwire.cli" or name.startswith("toolwire.cli.")}
        assert cli <= {"toolwire.cli.common"}, f"{path} imports {sorted(cli)}"
    shared = imported(SRC / "cli" / "common.py")
    assert not {name for name in shared if name.startswith(("toolwire.cli", "toolwire.terminal"))}, shared


def test_the_public_auth_names_resolve() -> None:
    import toolwire.auth

    for name in toolwire.auth.__all__:
        assert getattr(toolwire.auth, name) is not None


def test_the_client_at_the_root_is_the_client() -> None:
    run(
        "import sys, toolwire, toolwire.client\n"
        "assert toolwire.Client is toolwire.client.Client\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({SERVER_SIDE!r}))\n"
        "assert not loaded, loaded\n"
    )


def test_one_root_for_the_errors_a_user_catches() -> None:
    import toolwire
    from toolwire.auth import AuthError, InvalidToken
    from toolwire.client import ClientError, ServerError
    from toolwire.extras import ExtraMissing
    from toolwire.prompts.prompt import PromptArgumentsInvalid
    from toolwire.server.lifespan import LifespanFailed
    from toolwire.tasks import TaskStoreBusy, TaskStoreUnusable
    from toolwire.tools.validation import ArgumentsInvalid, SchemaError

    root = toolwire.ToolwireError
    for error in (
        toolwire.ToolError,
        toolwire.ResourceNotFound,
        toolwire.CapabilityMissing,
        toolwire.ClientRequestFailed,
        LifespanFailed,
        TaskStoreBusy,
        TaskStoreUnusable,
        AuthError,
        InvalidToken,
        PromptArgumentsInvalid,
        SchemaError,
        ArgumentsInvalid,
        ExtraMissing,
        ClientError,
        ServerError,
    ):
        assert issubclass(error, root), error
    # the bases users catch today stay
    assert issubclass(toolwire.ResourceNotFound, LookupError)
    assert issubclass(SchemaError, ValueError) and issubclass(PromptArgumentsInvalid, ValueError)
    assert issubclass(ExtraMissing, ImportError)
    assert not issubclass(toolwire.ProtocolError, root)  # the protocol package imports nothing of ours
