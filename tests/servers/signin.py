"""The vault server behind toolwire's authorization server, signing people in at
oidc-provider, for the authorization-server tests that need processes of their own:

    python signin.py ISSUER CLIENT_ID STATE PUBLIC_URL PORT

with the provider client's secret in TOOLWIRE_OAUTH_CLIENT_SECRET and STATE a file or a
Redis URL (two processes given one Redis URL and one PUBLIC_URL are two replicas)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.auth and tests.servers

from tests.auth.server.signing import upstream_at
from tests.servers.vault import server
from toolwire.auth.server.authorization import AuthorizationServer

if __name__ == "__main__":
    issuer, client_id, state, public_url, port = sys.argv[1:6]
    upstream = upstream_at(issuer, client_id, os.environ["TOOLWIRE_OAUTH_CLIENT_SECRET"])
    auth = AuthorizationServer(
        upstream, public_url, state=state, scopes=["tools", "admin"], allow_private_client_metadata=True
    )
    server.run_http(port=int(port), auth=auth)
