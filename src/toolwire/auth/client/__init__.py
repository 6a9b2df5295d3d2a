"""Authorization, the client's side: OAuth 2.1 for a client of protected servers
(:mod:`.oauth`), where tokens are kept (:mod:`.tokenstore`), DPoP proofs (:mod:`.dpop`) and
reading ``WWW-Authenticate`` challenges (:mod:`.challenge`). It imports nothing of the
server's side (:mod:`toolwire.auth.server`); the public names are :mod:`toolwire.auth`'s."""
