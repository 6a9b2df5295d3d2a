"""gateway.toml read into the gateway's configuration: the smallest file, every table, and one
clear line for each mistake (the table, the key, what was expected)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.gateway import ConfigError, load_config, parse_config


def test_the_smallest_file_is_its_upstreams_with_safe_defaults(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstreams.files]\ncommand = ["python", "files.py"]\ncwd = "servers/files"\n'
        '[upstreams.local]\ncommand = ["python", "local.py"]\n'
        '[upstreams.github]\nurl = "https://example.com/mcp"\n'
    )
    config = load_config(path)
    files, local, github = config.upstreams
    assert (config.name, config.separator, config.start, config.search, config.redis) == (
        "toolwire-gateway",
        ".",
        "lazy",
        False,
        None,
    )
    assert config.auth is None and config.policy_table == {} and config.path == path.resolve()
    assert (files.namespace, files.command, files.cwd) == ("files", ("python", "files.py"), tmp_path / "servers/files")
    assert local.cwd == tmp_path  # a command runs in the file's folder: local.py is found beside it
    assert github.cwd is None
    assert (github.namespace, github.url, github.timeout, github.start, github.enabled) == (
        "github",
        "https://example.com/mcp",
        60.0,
        "lazy",
        True,
    )


def test_every_table_is_read() -> None:
    config = parse_config(
        """
        [gateway]
        name = "team"
        separator = "__"
        start = "eager"
        search = true
        redis = "redis://127.0.0.1:6379/0"
        reload = false

        [upstreams.github]
        url = "https://example.com/mcp"
        namespace = "gh"
        headers = { "X-Api-Key" = "k" }
        bearer_env = "GITHUB_TOKEN"
        oauth = { client_id = "gateway", client_secret_env = "GH_SECRET", scopes = ["repo"] }
        timeout = 5
        start = "lazy"
        transport = "sse"

        [auth]
        issuer = "https://idp.example.com"
        audience = "https://gateway.example.com/mcp"

        [policy.default]
        allow = ["*/*"]

        [audit]
        file = "audit.jsonl"

        [admin]
        enabled = true
        """
    )
    (github,) = config.upstreams
    assert (config.name, config.separator, config.start, config.search, config.reload) == (
        "team",
        "__",
        "eager",
        True,
        False,
    )
    assert (github.namespace, dict(github.headers), github.bearer_env, github.timeout, github.start) == (
        "gh",
        {"X-Api-Key": "k"},
        "GITHUB_TOKEN",
        5.0,
        "lazy",
    )
    assert github.oauth is not None and (github.oauth.client_id, github.oauth.scopes) == ("gateway", ("repo",))
    assert config.auth is not None and config.auth.issuer == "https://idp.example.com"
    assert config.policy_table == {"default": {"allow": ["*/*"]}}
    assert (config.audit_table, config.admin_table) == ({"file": "audit.jsonl"}, {"enabled": True})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '[upstreams.github]\ncomand = ["x"]',
            "gateway.toml: [upstreams.github] 'comand' is not a known key (did you mean 'command'?)",
        ),
        (
            '[gateway]\nseperator = "."\n[upstreams.a]\ncommand = ["x"]',
            "[gateway] 'seperator' is not a known key (did you mean 'separator'?)",
        ),
        ("[gateway]\nname = 'x'", "gateway.toml: no upstreams: add one table per server"),
        (
            '[upstreams.a]\ncommand = "python server.py"',
            "[upstreams.a] 'command' must be a non-empty list of strings, not a string",
        ),
        ('[upstreams.a]\ncommand = ["x"]\nurl = "http://h/mcp"', "[upstreams.a] needs either command"),
        ("[upstreams.a]\nenv = {}", "[upstreams.a] needs either command"),
        ('[upstreams.a]\nurl = "ftp://h"', "[upstreams.a] 'url' must start with http:// or https://, not 'ftp://h'"),
        ('[upstreams.a]\nurl = "http://h"\nenv = { A = "b" }', "[upstreams.a] 'env' is for command upstreams"),
        ('[upstreams.a]\ncommand = ["x"]\nheaders = { A = "b" }', "[upstreams.a] 'headers' is for url upstreams"),
        (
            '[upstreams.a]\ncommand = ["x"]\ntimeout = 0',
            "[upstreams.a] 'timeout' must be a number of seconds above 0, not an integer (0)",
        ),
        (
            '[upstreams.a]\ncommand = ["x"]\nstart = "soon"',
            "[upstreams.a] 'start' must be 'lazy' or 'eager', not 'soon'",
        ),
        (
            '[upstreams.a]\ncommand = ["x"]\nenabled = "yes"',
            "[upstreams.a] 'enabled' must be true or false, not a string ('yes')",
        ),
        ('[upstreams.a]\ncommand = ["x"]\nnamespace = "a.b"', "[upstreams.a] namespace 'a.b' must be letters"),
        (
            '[upstreams.a]\ncommand = ["x"]\n[upstreams.b]\ncommand = ["y"]\nnamespace = "a"',
            "[upstreams.b] namespace 'a' is [upstreams.a]'s already",
        ),
        (
            '[upstreams.a]\nurl = "http://h"\noauth = { client_secret_env = "S" }',
            "[upstreams.a.oauth] 'client_id' is needed",
        ),
        (
            '[upstreams.a]\nurl = "http://h"\noauth = { client_id = "c", scope = [] }',
            "[upstreams.a.oauth] 'scope' is not a known key (did you mean 'scopes'?)",
        ),
        ('[upstreams.a]\ncommand = ["x"]\n[auth]\naudience = "x"', "[auth] needs issuer"),
        (
            '[upstreams.a]\ncommand = ["x"]\n[polcy]',
            "gateway.toml: 'polcy' is not a known key (did you mean 'policy'?)",
        ),
        (
            '[upstreams.a]\ncommand = ["x"]\n[gateway]\nseparator = "/"',
            "[gateway] 'separator' must be 1 to 3 of letters",
        ),
        ("[upstreams.a\n", "gateway.toml: not valid TOML"),
    ],
)
def test_a_mistake_is_one_line_naming_the_table_and_the_key(text: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(text)
    message = str(refused.value)
    assert said in message and "\n" not in message, message


def test_a_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot be read"):
        load_config(tmp_path / "missing.toml")
