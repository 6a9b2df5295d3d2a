"""``toolwire chat`` and ``toolwire ask``: a host's conversation in a terminal.

``chat`` is interactive: the tools the model can use are listed at start (and again when they
change), the answer streams as it comes, each tool call is shown with its arguments, a
progress bar and a short result, and every question of the host (allow a call, let a server
use the model, fill in a server's form) is asked at the prompt. Line editing and history come
from prompt_toolkit when it is installed and the terminal is one. Ctrl-C stops the turn in
progress; ``exit``, ``退出``, ``/quit`` or the end of input ends the chat.

``ask`` answers one question for scripts: the answer on stdout, the calls on stderr, no
question asked of anyone (calls that need confirmation are refused unless ``--yes`` or an
``--allow`` pattern covers them; forms are declined); ``--json`` prints every event as a line
of JSON instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import orjson

from ..cli.common import UsageError
from ..host import (
    ApprovalNeeded,
    Conversation,
    Done,
    ElicitationNeeded,
    Event,
    Host,
    SamplingNeeded,
    SandboxUnavailable,
    TextDelta,
    ToolCallDecided,
)
from ..host.elicitation import form_fields, parse_field
from .hostline import HostInvocation, build_host, parse
from .output import counted, for_stream, printable
from .render import Screen, name_warning

EXIT_WORDS = {"exit", "quit", "退出", "/quit", "/exit"}
HELP = """commands:
  /tools            the tools the model can use
  /servers          the servers, and why any of them is not connected
  /allowed          the tools always allowed in this conversation
  /save FILE        save the conversation as JSON (go on with it: toolwire chat ... --load FILE)
  /usage            the tokens used so far
  /quit             end the chat (so do exit, 退出 and Ctrl-D)"""


def main(command: str, argv: list[str]) -> int:
    """Run ``toolwire chat|ask ARGV...``; returns the exit status (see the help's epilog)."""
    try:
        invocation = parse(command, argv)
        return asyncio.run(_chat(invocation) if command == "chat" else _ask(invocation))
    except KeyboardInterrupt:
        return 130


async def _started(invocation: HostInvocation, screen: Screen) -> Host | None:
    """The host, connected; ``None`` (after saying why) if no server could be started."""
    host = build_host(invocation)
    try:
        await host.start()
    except SandboxUnavailable as exc:
        screen.say(f"toolwire: {exc}", "red")
        await host.close()
        return None
    for name, server in host.servers.items():
        if server.error is not None:
            screen.say(f"toolwire: the server {name!r} is not available: {server.error}", "red", lines=True)
    for said in host.warnings:
        screen.say(f"toolwire: {said}", "yellow")
    if not any(server.alive for server in host.servers.values()):
        await host.close()
        return None
    return host


# -- chat ------------------------------------------------------------------------------------


async def _chat(invocation: HostInvocation) -> int:
    screen = Screen()
    host = await _started(invocation, screen)
    if host is None:
        return 1
    try:
        if invocation.load is not None:
            try:
                conversation = Conversation.load(host, invocation.load, max_steps=invocation.max_steps)
            except (OSError, ValueError) as exc:
                raise UsageError(f"cannot load {invocation.load}: {exc}") from None
            if conversation.system is None:
                conversation.system = invocation.system
        else:
            conversation = host.conversation(system=invocation.system, max_steps=invocation.max_steps)
        conversation._shown_tools = True
        _list_tools(host, conversation, screen)
        if invocation.load is not None:
            count = len(conversation.messages)
            screen.say(f"loaded {count} message{'' if count == 1 else 's'} from {invocation.load}", "bold")
        screen.say("Ask anything; /help lists the commands.", "dim")
        reader = LineReader()
        loop = asyncio.get_running_loop()
        prepare = getattr(invocation.provider, "prepare", None)
        if prepare is not None:  # import the model's SDK while the person types
            loop.run_in_executor(None, prepare)
        while True:
            line = await reader.read("> ")
            if line is None or line.strip().lower() in EXIT_WORDS:
                return 0
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                _command(text, host, conversation, screen)
                continue
            await _turn(conversation, screen, reader, text)
    finally:
        await host.close()


async def _turn(conversation: Conversation, screen: Screen, reader: LineReader, text: str) -> None:
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, conversation.cancel)
    try:
        async for event in conversation.send(text):
            screen.draw(event)
            if isinstance(event, ApprovalNeeded):
                await _approve(event, screen, reader)
            elif isinstance(event, SamplingNeeded):
                screen.sampling(event)
                answer = await reader.read("  allow? [y]es / [n]o: ")
                event.allow() if (answer or "").strip().lower() in ("y", "yes") else event.refuse()
            elif isinstance(event, ElicitationNeeded):
                await _fill_in(event, screen, reader)
            elif isinstance(event, Done):
                usage = conversation.usage
                screen.say(f"[tokens: {usage.input_tokens} in, {usage.output_tokens} out]", "dim")
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)


async def _approve(event: ApprovalNeeded, screen: Screen, reader: LineReader) -> None:
    screen.approval(event)
    choices = "[y]es once / [a]lways for this tool / [n]o" if event.always_offered else "[y]es once / [n]o"
    while True:
        answer = await reader.read(f"  allow? {choices}: ")
        if answer is None:
            event.refuse("the user left")
            return
        answer = answer.strip().lower()
        if answer in ("y", "yes", "是"):
            event.allow()
            return
        if answer in ("a", "always") and event.always_offered:
            event.allow(always=True)
            return
        if answer in ("n", "no", "否"):
            why = await reader.read("  why (sent to the model; empty for none): ")
            event.refuse((why or "").strip())
            return
        screen.say(f"  answer {choices}")


async def _fill_in(event: ElicitationNeeded, screen: Screen, reader: LineReader) -> None:
    screen.elicitation(event)
    answer = await reader.read("  answer? [y]es / [d]ecline / [c]ancel: ")
    choice = (answer or "c").strip().lower()
    if choice in ("d", "decline"):
        event.decline()
        return
    if choice not in ("y", "yes"):
        event.cancel()
        return
    content: dict[str, Any] = {}
    for field in form_fields(event.schema):
        hints = [field.description] if field.description else []
        if field.choices:
            hints.append(" / ".join(str(choice) for choice in field.choices))
        hint = f" ({'; '.join(hints)})" if hints else ""
        mark = "" if field.required else " [optional]"
        while True:
            typed = await reader.read(f"  {field.label}{hint}{mark}: ")
            if typed is None:
                event.cancel()
                return
            if not typed.strip() and not field.required:
                break
            try:
                content[field.name] = parse_field(field, typed)
                break
            except ValueError as exc:
                screen.say(f"  {exc}", "red")
    try:
        event.accept(content)
    except ValueError as exc:
        screen.say(f"  {exc}: the form is declined", "red")
        event.decline()


def _command(text: str, host: Host, conversation: Conversation, screen: Screen) -> None:
    word, _, rest = text.partition(" ")
    if word == "/tools":
        _list_tools(host, conversation, screen)
    elif word == "/servers":
        for name, server in host.servers.items():
            trusted = " (trusted)" if name in host.policy.trusted else ""
            state = counted(len(server.tools), "tool") if server.alive else f"not connected: {server.error}"
            screen.say(f"  {name}{trusted}: {state}")
    elif word == "/allowed":
        always = sorted(
            f"{server}/{tool}" + (" ⚠" if host.mark(server, tool) else "")
            for server, tool in conversation.approvals.always
        )
        screen.say("  " + (", ".join(always) if always else "nothing is always allowed yet"))
    elif word == "/save":
        if not rest.strip():
            screen.say("  /save needs a file name", "red")
            return
        try:
            conversation.save(Path(rest.strip()).expanduser())
            screen.say(f"  saved {rest.strip()}")
        except OSError as exc:
            screen.say(f"  cannot save: {exc.strerror or exc}", "red")
    elif word == "/usage":
        usage = conversation.usage
        screen.say(f"  {counted(usage.input_tokens, 'token')} in, {usage.output_tokens} out")
    else:
        screen.say(HELP, lines=True)


def _list_tools(host: Host, conversation: Conversation, screen: Screen) -> None:
    """The tools the model is shown (and how many more it can find, when the host defers),
    and the skills it can load."""
    shown = conversation.shown_tools
    screen.tools(shown, "start", len(host.tools) - len(shown))
    if host.code_limits is not None:
        screen.say(f"code mode: the model calls these from programs it writes ({host.run_code_name}, sandboxed)")
    if host.skills:
        skills = ", ".join(f"{skill.name} ({skill.server})" for skill in host.skills)
        screen.say(f"skills the model can load: {skills}")


class LineReader:
    """Lines typed by the person: prompt_toolkit (editing, history) on a terminal when it is
    installed, plain lines otherwise. :meth:`read` returns ``None`` at the end of input."""

    def __init__(self) -> None:
        self._session: Any = None
        if sys.stdin.isatty() and sys.stdout.isatty():
            try:
                from prompt_toolkit import PromptSession
                from prompt_toolkit.history import FileHistory, InMemoryHistory
            except ImportError:
                return
            history: Any = InMemoryHistory()
            path = _history_path()
            with contextlib.suppress(OSError):
                path.parent.mkdir(parents=True, exist_ok=True)
                history = FileHistory(str(path))
            self._session = PromptSession(history=history)

    async def read(self, prompt: str) -> str | None:
        """The next line typed after ``prompt`` (shown through :func:`.output.printable`)."""
        prompt = printable(prompt, lines=False)
        if self._session is not None:
            while True:
                try:
                    line: str = await self._session.prompt_async(prompt)
                    break
                except KeyboardInterrupt:
                    continue  # Ctrl-C at the prompt clears the line
                except EOFError:
                    return None
        else:
            sys.stdout.write(prompt)
            sys.stdout.flush()
            read = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            if not read:
                return None
            line = read.rstrip("\n")
        return line


def _history_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "toolwire" / "chat-history"


# -- ask -------------------------------------------------------------------------------------


async def _ask(invocation: HostInvocation) -> int:
    """Exit status 0 answered, 3 answered but a call was refused (see the help's epilog), 1 not
    answered."""
    screen = Screen(sys.stderr)
    host = await _started(invocation, screen)
    if host is None:
        return 1
    try:
        conversation = host.conversation(system=invocation.system, max_steps=invocation.max_steps)
        done: Done | None = None
        refused = False
        said: set[tuple[str, str]] = set()
        async for event in conversation.send(invocation.question):
            if isinstance(event, ApprovalNeeded):
                _answer_call(event, invocation.yes, said, screen)
                refused = refused or not invocation.yes
            else:
                _answer_for_script(event, invocation.yes)
            if isinstance(event, ToolCallDecided) and event.decision == "refuse" and event.by == "policy":
                refused = True  # a --deny rule
            if invocation.as_json:
                sys.stdout.write(for_stream(orjson.dumps(event.to_dict()).decode(), sys.stdout) + "\n")
                sys.stdout.flush()
            elif isinstance(event, TextDelta):
                sys.stdout.write(for_stream(event.text, sys.stdout))
                sys.stdout.flush()
            else:
                screen.draw(event)
            if isinstance(event, Done):
                done = event
        if not invocation.as_json and conversation.text and not conversation.text.endswith("\n"):
            sys.stdout.write("\n")
        if done is None or done.reason != "answered":
            return 1
        return 3 if refused else 0
    finally:
        await host.close()


def _answer_call(event: ApprovalNeeded, yes: bool, said: set[tuple[str, str]], screen: Screen) -> None:
    """Nobody is there to ask: ``--yes`` allows the call, otherwise it is refused, and the
    first refusal of each tool says on stderr which flag would allow it."""
    if yes:
        event.allow(by="flag", reason="allowed by --yes")
        return
    event.refuse("nobody can be asked in toolwire ask, and no flag allows it", by="host")
    if (event.server, event.name) in said:
        return
    said.add((event.server, event.name))
    if event.warning:
        screen.say(name_warning(event.name, event.warning), "bold red")
    rule = f"--allow '{event.server}/{event.name}'"
    if not event.always_offered:  # an --ask rule: only --yes overrides it
        flags = "--yes allows it"
    elif not event.trusted and event.annotations.get("readOnlyHint") is True:
        flags = f"--trust {event.server} or {rule} allows it"
    else:
        flags = f"{rule} or --yes allows it"
    screen.say(f"toolwire: refused {event.server}/{event.name} ({event.reason}): {flags}", "red")


def _answer_for_script(event: Event, yes: bool) -> None:
    """Nobody is there to ask: ``--yes`` allows sampling, forms are declined."""
    if isinstance(event, SamplingNeeded):
        event.allow() if yes else event.refuse()
    elif isinstance(event, ElicitationNeeded):
        event.decline()
