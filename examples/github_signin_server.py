"""A remote MCP server behind GitHub sign-in: MCP clients register with this server, and
people sign in with their GitHub account (docs/auth-providers/github.md says what to
register at GitHub: an OAuth app whose callback is https://mcp.example.com/oauth/callback).

    export TOOLWIRE_OAUTH_CLIENT_SECRET=...   # the OAuth app's client secret
    toolwire run examples/github_signin_server.py --http 0.0.0.0:8000 --allow-host mcp.example.com \\
        --public-url https://mcp.example.com/mcp --oauth-upstream github --oauth-client-id Ov23liEXAMPLE
"""

from toolwire import Context, Server

server = Server("github-signin")


@server.tool(read_only=True)
def whoami(ctx: Context) -> str:
    """Who signed in: their name and e-mail address at GitHub."""
    caller = ctx.identity
    assert caller is not None  # every request to this server comes from someone signed in
    return f"{caller.claims.get('name')} <{caller.claims.get('email')}>, GitHub user {caller.subject}"
