"""A gateway: many MCP servers served as one, each under a namespace (see :mod:`.gateway`)."""

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
