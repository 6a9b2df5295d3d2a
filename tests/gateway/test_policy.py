"""The gateway's policy as guards of a server whose tools carry namespaced names: who sees
and may call which tools (over stdio as an anonymous caller, over HTTP as users with real
JWTs), look-alike names, argument constraints, and the errors of a policy table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.support import TEAM, served_over_http, stdio_client, write_config
from tests.support.httpserve import meta, modern_headers
from toolwire.auth import Identity
from toolwire.gateway.policy import load_policy


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"groups": {"admins": {"alow": ["*/*"]}}}, "[policy.groups.admins] 'alow' is not a known key (did you mean 'allow'?)"),
        ({"defaults": {}}, "[policy] 'defaults' is not a known key (did you mean 'default'?)"),
        ({"default": {"allow": "*/*"}}, "[policy.default] 'allow' must be a list of rules"),
        ({"default": {"deny": ["delete_repo"]}}, "the rule 'delete_repo' names no upstream; write UPSTREAM/TOOL (*/delete_repo"),
        ({"users": {"a@b.c": {"rate": "60/fortnight"}}}, '[policy.users."a@b.c"] \'rate\': a rate is "N/second"'),
        ({"default": {"concurrency": 0}}, "[policy.default] 'concurrency' must be a whole number of 1 or more"),
        ({"constraints": [{"tool": "files/read_file", "argument": "path"}]}, "[[policy.constraints]] #1 needs exactly one of"),
        ({"constraints": [{"tool": "files/x", "argument": "p", "under": "/srv/../etc"}]}, "'under' must be an absolute folder"),
        ({"constraints": [{"tool": "files/x", "argument": "p", "pattern": "("}]}, "'pattern' is not a regular expression"),
    ],
)  # fmt: skip
def test_a_policy_table_that_cannot_be_read_is_refused_in_one_line_naming_table_and_key(
    table: dict[str, Any], said: str
) -> None:
    with pytest.raises(ValueError) as caught:
        load_policy(table)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_sections_merge_per_caller_and_the_most_specific_limits_win() -> None:
    policy = load_policy(
        {
            "default": {"allow": ["files/*"], "rate": "10/minute", "search": True},
            "groups": {"big": {"rate": "100/minute"}, "small": {"rate": "20/minute", "search": False}},
            "scopes": {"tools:read": {"allow": ["github/get_*"]}},
            "users": {"bob@example.com": {"rate": "5/minute", "concurrency": 2}},
        }
    )
    anonymous = policy.grant(None)
    assert (anonymous.rate, anonymous.concurrency, policy.search_for(None)) == ("10/minute", None, True)
    ann = Identity("ann", scopes=frozenset({"tools:read"}), claims={"sub": "ann", "groups": ["big", "small"]})
    assert policy.grant(ann).rate == "100/minute" and not policy.search_for(ann)
    assert policy.grant(ann).verdict("github.get_issue").action == "allow"
    assert policy.grant(None).verdict("github.get_issue").action == "hidden"
    bob = Identity("u-17", claims={"sub": "u-17", "email": "bob@example.com", "groups": ["big"]})
    assert (policy.grant(bob).rate, policy.grant(bob).concurrency) == ("5/minute", 2)


def test_without_a_policy_table_everyone_may_call_everything() -> None:
    policy = load_policy(None)
    assert policy.grant(None).verdict("github.delete_repo").action == "allow"
    assert not policy.search_for(None)


async def test_an_anonymous_caller_over_stdio_gets_the_default_section(tmp_path: Path) -> None:
    config = write_config(tmp_path, TEAM)
    async with stdio_client(config) as client:
        names = sorted(tool.name for tool in await client.list_tools())
        assert names == ["files.hold", "files.list_files", "files.read_file", "files.release"]
        assert (await client.call_tool("files.list_files")).text == "a.txt b.txt"
        refused = await client.call_tool("github.create_issue", {"title": "x"})
        assert refused.is_error
        assert refused.text.startswith("github.create_issue is not allowed for anonymous by the gateway's policy")


async def test_three_users_see_and_call_what_their_sections_grant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, TEAM)
    async with served_over_http(config, monkeypatch) as served:
        async with served.client("alice", groups=("maintainers",)) as alice:
            names = {tool.name for tool in await alice.list_tools()}
            assert "github.create_issue" in names and "github.delete_repo" not in names
            refused = await alice.call_tool("github.delete_repo", {"name": "toolwire"})
            assert refused.is_error and refused.text.startswith(
                "github.delete_repo is not allowed for alice by the gateway's policy (deny 'github/delete_repo')"
            )
            assert (await alice.call_tool("github.get_issue", {"number": 7})).text == "issue 7"
        async with served.client("carol", groups=("admins",)) as carol:
            assert (await carol.call_tool("github.delete_repo", {"name": "old"})).text == "deleted old"
        async with served.client("dave") as dave:  # no group: the default section
            names = {tool.name for tool in await dave.list_tools()}
            assert not any(name.startswith("github.") for name in names)
            assert (await dave.call_tool("github.get_issue", {"number": 1})).is_error


async def test_deny_rules_also_refuse_look_alike_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_config(tmp_path, TEAM)
    async with (
        served_over_http(config, monkeypatch) as served,
        served.client("alice", groups=("maintainers",)) as alice,
    ):
        alike = "github.de1ete_repo"  # a digit one for the l
        assert alike not in {tool.name for tool in await alice.list_tools()}
        refused = await alice.call_tool(alike, {"name": "toolwire"})
        assert refused.is_error and "(deny 'github/delete_repo')" in refused.text


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/etc/passwd", "must be under /srv/shared"),
        ("/srv/shared/../../etc/passwd", "must not contain '..'"),
        ("/srv/shared-other/x", "must be under /srv/shared"),
        ("notes.txt", "must be an absolute path under /srv/shared"),
    ],
)
async def test_an_argument_breaking_a_constraint_is_refused_naming_argument_and_rule(
    tmp_path: Path, path: str, why: str
) -> None:
    config = write_config(tmp_path, TEAM)
    async with stdio_client(config) as client:
        assert (
            await client.call_tool("files.read_file", {"path": "/srv/shared/a.txt"})
        ).text == "read /srv/shared/a.txt"
        refused = await client.call_tool("files.read_file", {"path": path})
        assert refused.is_error
        assert f"files.read_file: the argument 'path' {why}" in refused.text
        assert "the gateway's rule under = '/srv/shared' for files/read_file" in refused.text


def test_pattern_one_of_and_max_length_constraints() -> None:
    def problem(check: dict[str, Any], value: Any) -> str | None:
        policy = load_policy({"constraints": [{"tool": "github/*", "argument": "title", **check}]})
        return policy.constraint_problem("github.create_issue", {"title": value})

    assert problem({"pattern": "[a-z ]+"}, "fix it") is None
    assert "must match the pattern '[a-z ]+'" in str(problem({"pattern": "[a-z ]+"}, "fix it!"))
    assert problem({"one_of": ["a", "b"]}, "b") is None
    assert "must be one of 'a', 'b'" in str(problem({"one_of": ["a", "b"]}, "c"))
    assert "at most 3 characters (it has 4)" in str(problem({"max_length": 3}, "four"))
    assert "must be a string, not a number" in str(problem({"max_length": 3}, 4))


async def test_a_list_that_depends_on_the_caller_is_marked_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with served_over_http(write_config(tmp_path, TEAM), monkeypatch) as served:
        token = served.issuer.token(served.url, subject="alice", groups=["maintainers"])
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}
        headers = {**modern_headers("tools/list"), "Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient() as http:
            reply = await http.post(served.url, json=body, headers=headers)
        result = reply.json()["result"]
        assert result["cacheScope"] == "private"
        assert "github.create_issue" in {tool["name"] for tool in result["tools"]}
