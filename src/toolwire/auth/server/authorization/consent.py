"""The pages a person sees at the authorization server: the consent page (which client, where
it will be sent back to, what it asks for) and the error page. Everything shown is escaped;
the pages run no script, cannot be framed (``frame-ancestors 'none'``) and are not cached.
The consent form carries a token that must match the sign-in it belongs to, and is only
accepted from the browser whose cookie that sign-in was bound to (CSRF)."""

from __future__ import annotations

from html import escape

from .web import Response, page

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}"
    "code{background:#f3f3f3;padding:0 .2rem;word-break:break-all}button{font-size:1rem;padding:.5rem 1.2rem;"
    "margin-right:.5rem}li{margin:.2rem 0}"
)


def consent_page(
    *,
    server: str,
    provider: str,
    client_name: str,
    client_id: str,
    redirect_uri: str,
    scopes: list[str],
    pending: str,
    form_token: str,
) -> Response:
    """The page asking a person whether ``client_name`` may act for them on ``server``."""
    asked = "".join(f"<li><code>{escape(scope)}</code></li>" for scope in scopes) or "<li>no particular scope</li>"
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Allow access?</title>
<style>{_STYLE}</style></head><body>
<h1>Allow <em>{escape(client_name)}</em> to use {escape(server)}?</h1>
<p>The application <strong>{escape(client_name)}</strong> (client ID <code>{escape(client_id)}</code>)
asks to act for you on <code>{escape(server)}</code>. You will sign in at {escape(provider)} next.</p>
<p>It will be sent back to <code>{escape(redirect_uri)}</code>. Allow only if you trust that address.</p>
<p>It asks for:</p><ul>{asked}</ul>
<form method="post" action="/oauth/consent">
<input type="hidden" name="pending" value="{escape(pending)}">
<input type="hidden" name="form_token" value="{escape(form_token)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></body></html>"""
    return page(200, html)


def error_page(status: int, title: str, message: str) -> Response:
    """A page saying what went wrong and what the person can do."""
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1><p>{escape(message)}</p></body></html>"""
    return page(status, html)
