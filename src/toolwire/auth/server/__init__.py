"""Authorization, the server's side: an HTTP server as an OAuth 2.1 protected resource
(:mod:`.resource`: metadata, token checks, challenges), the token verifiers
(:mod:`.verifiers`) and the JWKS they read keys from (:mod:`.jwks`). Nothing here is imported
by the client's side (:mod:`toolwire.auth.client`); the public names are
:mod:`toolwire.auth`'s."""
