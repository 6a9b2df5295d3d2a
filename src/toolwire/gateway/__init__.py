"""A gateway: many MCP servers served as one, each under a namespace (see :mod:`.gateway`
and docs/gateway.md), per caller: :mod:`.policy` (who may see and call what, argument
constraints), :mod:`.approval` (asking the caller before an ``ask`` rule's calls),
:mod:`.limits` (per-caller rate and concurrency) and :mod:`.audit` (the ``[audit]`` table),
guards the gateway's server takes."""

from .config import AuthConfig, ConfigError, GatewayConfig, OAuthCredentials, UpstreamConfig, load_config, parse_config
from .gateway import Gateway
from .health import UpstreamRunner
from .upstreams import UpstreamUnusable

__all__ = [
    "AuthConfig",
    "ConfigError",
    "Gateway",
    "GatewayConfig",
    "OAuthCredentials",
    "UpstreamConfig",
    "UpstreamRunner",
    "UpstreamUnusable",
    "load_config",
    "parse_config",
]
