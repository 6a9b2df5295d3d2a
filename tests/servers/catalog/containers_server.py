"""A container server of the search catalog (tests/test_search.py): containers, images, logs."""

from __future__ import annotations

from toolwire import Server

server = Server("containers", "1.0.0")


@server.tool(read_only=True)
def list_containers(all_states: bool = False) -> list[str]:
    """List the Docker containers running on this machine.

    Args:
        all_states: Include stopped containers.
    """
    return ["web (running)"]


@server.tool()
def run_container(
    image: str, name: str | None = None, ports: list[str] | None = None, env: list[str] | None = None
) -> str:
    """Start a new container from an image.

    Args:
        image: Image name and tag, such as nginx:1.27.
        name: Container name.
        ports: Port mappings HOST:CONTAINER.
        env: Environment variables KEY=VALUE.
    """
    return "container started"


@server.tool()
def stop_container(container: str, timeout_seconds: int = 10) -> str:
    """Stop a running container.

    Args:
        container: Name or id.
        timeout_seconds: Grace period before it is killed.
    """
    return f"stopped {container}"


@server.tool()
def restart_container(container: str) -> str:
    """Restart a container.

    Args:
        container: Name or id.
    """
    return f"restarted {container}"


@server.tool(read_only=True)
def container_logs(container: str, tail: int = 100, since: str | None = None) -> str:
    """Show the log output of a container.

    Args:
        container: Name or id.
        tail: Number of lines from the end.
        since: Only lines after this time.
    """
    return "GET / 200"


@server.tool()
def build_image(context: str, tag: str, dockerfile: str = "Dockerfile") -> str:
    """Build a Docker image from a Dockerfile.

    Args:
        context: Directory sent to the builder.
        tag: Name and tag of the image.
        dockerfile: Path of the Dockerfile.
    """
    return f"built {tag}"


@server.tool(read_only=True)
def list_images() -> list[str]:
    """List the container images stored locally, with their sizes."""
    return ["nginx:1.27 (67 MB)"]


@server.tool(destructive=True)
def remove_container(container: str, force: bool = False) -> str:
    """Delete a container.

    Args:
        container: Name or id.
        force: Remove it even if it is running.
    """
    return f"removed {container}"


@server.tool(read_only=True)
def container_stats(container: str) -> dict[str, object]:
    """CPU, memory and network usage of a running container.

    Args:
        container: Name or id.
    """
    return {"cpu": "2%"}
