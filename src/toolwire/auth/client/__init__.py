"""Authorization, the client's side: OAuth 2.1 for a client of protected servers
(:mod:`.oauth`, with its :mod:`.discovery` and :mod:`.registration`), how the user authorizes
(:mod:`.authorize`), enterprise ID-JAG assertions (:mod:`.id_jag`), where tokens are kept
(:mod:`.tokenstore`), DPoP proofs (:mod:`.dpop`), reading ``WWW-Authenticate`` challenges
(:mod:`.challenge`) and what goes wrong (:mod:`.errors`). It imports nothing of the server's
side (:mod:`toolwire.auth.server`); the public names are :mod:`toolwire.auth`'s."""
