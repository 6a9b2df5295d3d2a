"""The command lines of ``toolwire chat`` and ``toolwire ask``, and the host they describe.

    toolwire chat [TARGET ...] [--config FILE] [options] [-- COMMAND ...]
    toolwire ask [TARGET ...] QUESTION [--yes] [--allow PATTERN] [--json] [options] [-- COMMAND ...]

TARGET is ``FILE.py[:OBJECT]``, an ``http(s)://`` URL, or either as ``NAME=TARGET`` to name
the server (the name ``--trust`` and the rules use: one that names no server is an error); one
server's command line may follow ``--``; ``--config`` reads an ``mcpServers`` file. The model
comes from the first of ``DEEPSEEK_API_KEY``, ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` that is
set (or from ``--provider``, ``--api-key``, ``--base-url``, ``--model``): see
:func:`choose_provider`. Every mistake is a :class:`~toolwire.cli.common.UsageError`.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ..cli.common import Parser, UsageError
from ..extras import ExtraMissing, require
from ..host import ApprovalPolicy, ConfigError, Host, ServerSpec, load_config
from ..host.model import Provider
from ..host.servers import spec_for, unique_names
from .commandline import seconds

DEEPSEEK_URL = "https://api.deepseek.com"
#: The model used for each key when ``--model`` (or ``TOOLWIRE_MODEL``) names none.
DEFAULT_MODELS = {
    "DEEPSEEK_API_KEY": "deepseek-chat",
    "OPENAI_API_KEY": "gpt-4o-mini",
    "ANTHROPIC_API_KEY": "claude-sonnet-4-5",
}
SYSTEM = (
    "You are a helpful assistant. Choose the right tools for the user's request and fill in their arguments,"
    " or answer directly."
)

DESCRIPTIONS = {
    "chat": "Talk with a language model that can use the tools of MCP servers. Every tool call is\n"
    "shown; calls that are not read-only tools of trusted servers are asked about first.\n"
    "Type /help in the chat for its commands; exit, 退出 or end of input (Ctrl-D) ends it.",
    "ask": "Ask a language model one question, with the tools of MCP servers; print its answer.\n"
    "Nobody is asked anything: calls that need confirmation are refused, unless --yes\n"
    "(allow every call no rule denies) or --allow PATTERN (allow those tools).",
}
EPILOG = """TARGET: FILE.py[:OBJECT] (served by `toolwire run`), an http(s) URL, or NAME=TARGET to
name the server; one server's command line may follow --.

The model: --provider openai (any OpenAI-compatible API) or anthropic. Keys come from
--api-key or DEEPSEEK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY (the first one set chooses
the provider when --provider is not given; DeepSeek needs nothing else). --base-url points
the provider elsewhere: a vLLM, Ollama or LM Studio server on this machine needs no key.

SERVER: NAME of NAME=TARGET, a config's key, or the target's file stem (examples/seed_server.py
is seed_server); --trust and rules that name no server are errors.

PATTERN: SERVER/TOOL or TOOL, with shell wildcards (seed/delete_*, */read_*); TOOL is the
server's name of the tool. --deny and --ask also catch look-alike names (delete_file with a
Cyrillic e, U+0435); a bare --allow TOOL that matches tools of several servers allows none
of them: write SERVER/TOOL, or */TOOL for all.

exit status: 0 answered; 3 (ask) answered, but a call was refused (it needed confirmation
and no flag allowed it, or a --deny rule; stderr names the flag that allows it); 1 the
model's API failed, no server could be started, or the step limit was reached; 2 a mistake
on the command line or a missing key; 130 interrupted."""


@dataclass(slots=True)
class HostInvocation:
    command: str
    servers: list[ServerSpec]
    provider: Provider
    policy: ApprovalPolicy
    system: str
    timeout: float
    max_steps: int
    question: str = ""
    yes: bool = False
    as_json: bool = False
    load: str | None = None
    code_mode: bool = False


def parse(command: str, argv: list[str], environ: dict[str, str] | None = None) -> HostInvocation:
    """The :class:`HostInvocation` of ``toolwire chat|ask ARGV...``; :class:`UsageError` if
    it is wrong (``-h`` prints the help and exits with status 0)."""
    environ = dict(os.environ) if environ is None else environ
    server_command: list[str] | None = None
    if "--" in argv:
        split = argv.index("--")
        argv, server_command = argv[:split], argv[split + 1 :]
        if not server_command:
            raise UsageError("a command line is needed after --")
    options = _parser(command).parse_intermixed_args(argv)
    words: list[str] = options.words
    question = ""
    if command == "ask":
        alone = len(words) == 1 and server_command is None and options.config is None
        if not words or (alone and is_target(words[0])):
            raise UsageError('the question is needed, after the servers: toolwire ask TARGET... "question"')
        question, words = words[-1], words[:-1]
    specs = server_specs(words, server_command, options.config)
    policy = ApprovalPolicy(allow=options.allow, ask=options.ask, deny=options.deny, trusted=set(options.trust))
    try:
        policy.check([spec.name for spec in specs])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return HostInvocation(
        command,
        specs,
        choose_provider(options, environ),
        policy,
        options.system or SYSTEM,
        options.timeout,
        options.max_steps,
        question,
        yes=getattr(options, "yes", False),
        as_json=getattr(options, "json", False),
        load=getattr(options, "load", None),
        code_mode=options.code_mode,
    )


def server_specs(words: list[str], server_command: list[str] | None, config: str | None) -> list[ServerSpec]:
    """The servers of TARGET words, a command line after ``--`` and a ``--config`` file, named
    apart; :class:`UsageError` for none, a word that is not a TARGET or a config that
    cannot be used. A server at a URL authorizes in the terminal when it asks."""
    specs = [spec_for(checked_target(word)) for word in words]
    if server_command is not None:
        specs.append(spec_for(server_command))
    if config is not None:
        try:
            specs += load_config(config)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    if not specs:
        raise UsageError("name at least one server: a TARGET, --config FILE, or a command after --")
    for spec in unique_names(specs):
        if isinstance(spec.target, str) and spec.target.startswith(("http://", "https://")) and not spec.headers:
            from .auth import terminal_oauth

            spec.options.setdefault("auth", terminal_oauth())  # asks only when the server does
    return specs


def build_host(invocation: HostInvocation) -> Host:
    return Host(
        invocation.servers,
        provider=invocation.provider,
        policy=invocation.policy,
        call_timeout=invocation.timeout,
        code_mode=invocation.code_mode,
    )


def is_target(word: str) -> bool:
    """Whether ``word`` reads as a TARGET (a ``.py`` file or an http(s) URL, maybe named)."""
    target = word.partition("=")[2] or word
    return target.startswith(("http://", "https://")) or target.partition(":")[0].endswith(".py")


def checked_target(word: str) -> Any:
    name, equals, rest = word.partition("=")
    target = rest if equals and name and "/" not in name else word
    if target.startswith(("http://", "https://")):
        return word
    path = target.partition(":")[0]
    if not path.endswith(".py"):
        raise UsageError(
            f"{word!r} is not a TARGET: FILE.py[:OBJECT], an http(s) URL, NAME=TARGET, or a command after --"
        )
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    return word


def choose_provider(options: argparse.Namespace, environ: dict[str, str]) -> Provider:
    """The model the options and environment name (see the module's description).
    :class:`UsageError` naming the variable to set when no key is found, or the package to
    install when the provider's SDK is missing."""
    kind = options.provider
    local = options.base_url is not None and _is_local(options.base_url)
    if kind is None:
        order = ["DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
        found = next((name for name in order if environ.get(name)), None)
        kind = "anthropic" if found == "ANTHROPIC_API_KEY" else "openai"
    names = ["ANTHROPIC_API_KEY"] if kind == "anthropic" else ["DEEPSEEK_API_KEY", "OPENAI_API_KEY"]
    if kind == "openai" and options.base_url is not None and "deepseek" not in options.base_url:
        names.reverse()
    source = next((name for name in names if environ.get(name)), None)
    key = options.api_key or (environ[source] if source else None)
    if key is None and local:
        key = "unused"
    if key is None:
        wanted = names if options.provider else ["DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
        listed = wanted[0] if len(wanted) == 1 else f"{', '.join(wanted[:-1])} or {wanted[-1]}"
        raise UsageError(f"no API key: set {listed} (or pass --api-key)")
    model = options.model or environ.get("TOOLWIRE_MODEL") or DEFAULT_MODELS.get(source or "")
    if model is None:
        raise UsageError("name the model with --model (or TOOLWIRE_MODEL)")
    base_url = options.base_url
    if kind == "openai" and base_url is None and source == "DEEPSEEK_API_KEY" and not options.api_key:
        base_url = DEEPSEEK_URL
    media = {"image"} if options.images else None
    try:  # the SDK itself is imported on first use, not at start
        require("chat", f"the {kind} provider", modules=(kind,))
    except ExtraMissing as exc:
        raise UsageError(str(exc)) from None
    if kind == "anthropic":
        from ..host.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, api_key=key, base_url=base_url)
    from ..host.providers.openai import OpenAIProvider

    return OpenAIProvider(model, api_key=key, base_url=base_url, media=media)


def _is_local(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parser(command: str) -> Parser:
    parser = Parser(
        prog=f"toolwire {command}",
        usage=f"toolwire {command} [TARGET ...]{' QUESTION' if command == 'ask' else ''} [options] [-- COMMAND ...]",
        description=DESCRIPTIONS[command],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--config", metavar="FILE", help='servers from an "mcpServers" JSON file')
    parser.add_argument(
        "--provider", choices=["openai", "anthropic"], help="the model's API (default: from the key set)"
    )
    parser.add_argument("--model", help="the model (default: deepseek-chat, gpt-4o-mini or claude-sonnet-4-5 by key)")
    parser.add_argument("--base-url", metavar="URL", help="the API's URL (an OpenAI-compatible server's .../v1)")
    parser.add_argument("--api-key", metavar="KEY", help="the API key (default: from the environment)")
    parser.add_argument("--images", action="store_true", help="the model reads images (OpenAI-compatible servers)")
    parser.add_argument("--system", metavar="TEXT", help="the system prompt")
    parser.add_argument(
        "--trust",
        metavar="SERVER",
        action="append",
        default=[],
        help="believe this server's annotations: its read-only tools run without asking",
    )
    parser.add_argument(
        "--allow", metavar="PATTERN", action="append", default=[], help="run these tools without asking"
    )
    parser.add_argument("--ask", metavar="PATTERN", action="append", default=[], help="always ask before these tools")
    parser.add_argument("--deny", metavar="PATTERN", action="append", default=[], help="never run these tools")
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=seconds,
        default=120.0,
        help="how long a tool call may go without an answer or progress (default: 120)",
    )
    parser.add_argument(
        "--max-steps", metavar="N", type=int, default=20, help="model requests per question (default: 20)"
    )
    parser.add_argument(
        "--code-mode",
        action="store_true",
        help="the model calls the tools from a Python program it writes, run in a sandbox (needs bubblewrap)",
    )
    if command == "ask":
        parser.add_argument("--yes", action="store_true", help="allow every call that no --deny refuses")
        parser.add_argument("--json", action="store_true", help="print every event as a line of JSON")
    else:
        parser.add_argument("--load", metavar="FILE", help="go on with a conversation saved with /save")
    return parser
