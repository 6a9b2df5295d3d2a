"""A server with a tool, a resource and a prompt that need the scope ``admin``, and a tool
that says who calls, for the authorization tests."""

from toolwire import Context, Server

server = Server("vault")


@server.tool
def whoami(ctx: Context) -> str:
    """Who is calling."""
    identity = ctx.identity
    if identity is None:
        return "nobody authenticated"
    return f"{identity.subject} via {identity.client_id} with {' '.join(sorted(identity.scopes))}"


@server.tool(scopes=["admin"])
def reset() -> str:
    """Reset everything."""
    return "reset done"


@server.resource("secret://plans", scopes=["admin"])
def plans() -> str:
    return "the plans"


@server.resource("public://notes")
def notes() -> str:
    return "notes"


@server.prompt(scopes=["admin"])
def audit_prompt() -> str:
    return "audit everything"
