"""The identity providers toolwire's authorization server signs people in at, each an
:class:`~..upstream.Upstream`: any OpenID provider (:mod:`.oidc`), GitHub (:mod:`.github`),
the presets for known ones and :func:`resolve_upstream` (:mod:`.presets`); what they share,
the token endpoint's exchanges, is :mod:`.exchange`."""

from .github import GitHubUpstream
from .oidc import OIDCUpstream
from .presets import PRESETS, resolve_upstream

__all__ = ["PRESETS", "GitHubUpstream", "OIDCUpstream", "resolve_upstream"]
