"""One replica of a server that keeps the provider's tokens, for the vault's race tests.

    python vault_replica.py STATE GITHUB_BASE SUBJECT

STATE is the authorization server's store (an SQLite file or a redis:// URL), GITHUB_BASE
the local GitHub (``github_api.py``; its GitHub App), the vault's keys in
``TOOLWIRE_VAULT_KEYS``. Prints "ready", waits for a line on stdin, then asks the vault for
SUBJECT's access token and prints it, or the error's type and message.
"""

import asyncio
import sys

from toolwire.auth.server.authorization.state import open_auth_state
from toolwire.auth.server.upstreams import GitHubUpstream
from toolwire.auth.server.vault import TokenVault


async def main() -> None:
    state, base, subject = sys.argv[1:4]
    upstream = GitHubUpstream("Iv23-github-app", "app-secret", base_url=base, api_url=f"{base}/api")
    store = open_auth_state(state)
    vault = TokenVault(store, upstream)
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    try:
        print(await vault.access_token(subject), flush=True)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", flush=True)
    finally:
        await store.close()


asyncio.run(main())
