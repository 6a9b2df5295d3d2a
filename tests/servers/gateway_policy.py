"""A server whose tools carry a gateway's namespaced names (``files.read_file``,
``github.delete_repo``), guarded by the policy of the gateway.toml named by the environment
variable ``TOOLWIRE_TEST_GATEWAY`` (its ``[policy]`` and ``[audit]`` tables; limits shared
through ``TOOLWIRE_TEST_REDIS`` when set), for the gateway's policy tests."""

import asyncio
import os
import tomllib
from pathlib import Path

from toolwire import Context, Server
from toolwire.gateway import limits
from toolwire.gateway.policy import load_policy

limits.LEASE = float(os.environ.get("TOOLWIRE_TEST_LEASE", limits.LEASE))
config_file = Path(os.environ["TOOLWIRE_TEST_GATEWAY"])
config = tomllib.loads(config_file.read_text())
policy = load_policy(
    config.get("policy"),
    config.get("audit"),
    separator=".",
    redis_url=os.environ.get("TOOLWIRE_TEST_REDIS"),
    base=str(config_file.parent),
)
server = Server("gateway-policy", guards=policy.guards())
if policy.offers_search:
    server.expose_search(only_for=policy.search_for)
released = asyncio.Event()


@server.tool(name="files.read_file")
def read_file(path: str) -> str:
    """Read a file of the shared folder."""
    return f"read {path}"


@server.tool(name="files.list_files")
def list_files() -> str:
    """List the shared folder."""
    return "a.txt b.txt"


@server.tool(name="github.get_issue")
def get_issue(number: int) -> str:
    """Get an issue."""
    return f"issue {number}"


@server.tool(name="github.create_issue")
def create_issue(title: str, body: str = "") -> str:
    """Open an issue."""
    return f"opened {title!r}"


@server.tool(name="github.delete_repo", destructive=True)
def delete_repo(name: str) -> str:
    """Delete a repository for good, with its issues and history."""
    return f"deleted {name}"


@server.tool(name="github.de1ete_repo")
def delete_repo_alike(name: str) -> str:
    """A tool whose name looks like delete_repo (a digit one for the l)."""
    return f"deleted {name} too"


@server.tool(name="files.hold")
async def hold(ctx: Context) -> str:
    """Say "holding", then wait until files.release is called (a call in flight for as long
    as a test needs)."""
    await ctx.info("holding")
    await released.wait()
    return "released"


@server.tool(name="files.release")
def release() -> str:
    """End every files.hold call."""
    released.set()
    released.clear()
    return "done"
