"""What each command does once connected: one coroutine per command, taking the client and
the :class:`~.commandline.Invocation`. Failures are raised as :class:`ClientError` (exit
status 1), with a message that says what is wrong."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import sys
from collections.abc import Awaitable, Callable

from ..client import CallToolResult, Client, ClientError, ServerError, TaskCancelled, TaskInfo, ToolInfo
from ..client.errors import ConnectionClosed
from ..client.transports import StdioProcess
from ..protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND
from ..protocol.versions import TASKS_EXTENSION
from ..tracebacks import own_lines
from .commandline import Invocation
from .output import print_contents, print_messages, print_result, printable, write_json
from .progress import ProgressDisplay
from .schemas import arguments, check_arguments


async def tools(client: Client, invocation: Invocation) -> None:
    """List the tools: a table, or their definitions as JSON."""
    listed = await client.list_tools()
    if invocation.as_json:
        write_json([tool.raw for tool in listed])
        return
    from .table import print_tools

    print_tools(listed, client.server_info, client.version, await _task_support(client, invocation, listed))


async def _task_support(client: Client, invocation: Invocation, listed: list[ToolInfo]) -> dict[str, str]:
    """Which tools run as tasks, by name. 2025-11-25 says so on each tool; 2026-07-28 says
    only that the server has the tasks extension, so then the tools are listed again over a
    2025-11-25 connection (nothing is marked if the server does not speak it)."""
    support = {tool.name: tool.task_support for tool in listed if tool.task_support is not None}
    extensions = client.capabilities.get("extensions")
    if support or not client.modern or not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
        return support
    from . import _connected

    try:
        async with _connected(invocation, "2025-11-25") as legacy:
            again = await legacy.list_tools()
    except ClientError:
        return {}
    return {tool.name: tool.task_support for tool in again if tool.task_support is not None}


async def call(client: Client, invocation: Invocation) -> None:
    """Call a tool with arguments converted by its schema and print the result, with its
    progress on stderr. :class:`ClientError` for an unknown tool or a result with ``isError``;
    when the call fails, the message ends with what a server started here wrote on stderr
    meanwhile (its ``print()``, its traceback without toolwire's frames)."""
    listed = {tool.name: tool for tool in await client.list_tools()}
    _ensure_listed(invocation.subject, list(listed), "tool")
    tool = listed[invocation.subject]
    if invocation.arguments is None:
        invocation.arguments = arguments(invocation.pairs, tool.input_schema)
    check_arguments(tool.name, invocation.arguments, tool.input_schema)
    progress = ProgressDisplay(tool.name)
    process = client.transport if isinstance(client.transport, StdioProcess) else None
    mark = process.stderr_written if process is not None else 0
    try:
        try:
            if invocation.task:
                result = await _call_as_task(client, invocation, tool.name, progress)
            else:
                result = await client.call_tool(tool.name, invocation.arguments, progress=progress.update)
        finally:
            progress.close()
        _print_call(result, tool.name, invocation)
    except ConnectionClosed:
        raise  # the server died: its last words are in the message
    except ClientError as exc:
        said = _server_said(process, mark)
        if not said:
            raise
        raise ClientError(f"{exc}{said}") from None


def _server_said(process: StdioProcess | None, mark: int) -> str:
    """What the server wrote on stderr since ``mark``, as lines to add to an error message
    (toolwire's frames left out of its tracebacks), or ``""``."""
    said = own_lines(process.stderr_since(mark)).strip() if process is not None else ""
    return f"\nthe server's stderr during the call:\n{said}" if said else ""


async def _call_as_task(client: Client, invocation: Invocation, tool: str, progress: ProgressDisplay) -> CallToolResult:
    """Start the call as a task, say its id, and wait for its end showing its status."""
    handle = await client.start_task(tool, invocation.arguments, progress=progress.update)
    if handle.id is None:
        return await handle.result()  # the server answered at once
    _say(f"task {handle.id} started; `toolwire task {invocation.shown_target} {handle.id}` shows it")
    try:
        return await handle.result(on_status=lambda info: progress.update(0, None, _status_line(info)))
    except asyncio.CancelledError:
        _say(f"task {handle.id} goes on on the server: `toolwire task {invocation.shown_target} {handle.id} --wait`")
        raise


def _print_call(result: CallToolResult, tool: str, invocation: Invocation) -> None:
    """Print a call's result (or raise for an ``isError`` one)."""
    if invocation.as_json:
        write_json(result.raw)
        if result.is_error:
            raise ClientError(f"tool {tool!r} reported an error (isError)")
        return
    if result.is_error:
        said = result.text or "(no message)"
        named = f"tool {tool!r} "
        if said[: len(named)].lower() == named.lower():  # toolwire servers name the tool themselves
            raise ClientError(named + said[len(named) :])
        raise ClientError(f"tool {tool!r} failed: {said}")
    print_result(result, tool, invocation.out)


async def tasks(client: Client, invocation: Invocation) -> None:
    """List the tasks the server shows (2025-11-25 ``tasks/list``): a table, or JSON."""
    if client.modern:
        raise ClientError("2026-07-28 has no list of tasks: use --protocol 2025-11-25, or `toolwire task TARGET ID`")
    if "tasks" not in client.capabilities:
        raise ClientError("the server runs no tool as a task")
    listed = await client.list_tasks()
    if invocation.as_json:
        write_json([info.raw for info in listed])
        return
    from .table import print_tasks

    print_tasks(listed, client.server_info, client.version)


async def show_queue(url: str, as_json: bool) -> None:
    """``toolwire tasks --queue URL``: how many tasks wait on the queue, and which worker runs
    which. :class:`ClientError` when the queue cannot be reached."""
    from ..extras import require
    from ..tasks.queue import open_queue

    require("workers", "tasks --queue")
    try:
        queue = open_queue(url, name="toolwire:queue")
    except ValueError as exc:
        raise ClientError(f"--queue: {exc}") from None
    try:
        running = await queue.running()
        waiting = await queue.depth()
    except Exception as exc:
        raise ClientError(f"cannot read the task queue at {url}: {type(exc).__name__}: {exc}") from None
    finally:
        with contextlib.suppress(Exception):
            await queue.close()
    if as_json:
        write_json({"waiting": waiting, "running": running})
        return
    sys.stdout.write(f"{waiting} waiting, {len(running)} running\n")
    for task_id, worker in sorted(running.items(), key=lambda item: item[1]):
        sys.stdout.write(f"{task_id}  {worker}\n")


async def task(client: Client, invocation: Invocation) -> None:
    """Show a task; ``--wait`` for its result, ``--cancel`` to cancel it. :class:`ClientError`
    for an unknown task (or another caller's), a failed or cancelled one."""
    handle = client.task(invocation.subject)
    try:
        if invocation.cancel:
            await handle.cancel()
        info = await handle.refresh()
        if invocation.wait or info.status == "completed":
            progress = ProgressDisplay(info.id)
            try:
                result = await handle.result(on_status=lambda info: progress.update(0, None, _status_line(info)))
            finally:
                progress.close()
            info = await handle.refresh() if not invocation.wait else info
        else:
            result = None
    except ServerError as exc:
        if exc.code == INVALID_PARAMS and "not found" in exc.message.lower():
            raise ClientError(f"no task {invocation.subject!r} here: {exc.message}") from None
        raise ClientError(f"task {invocation.subject} failed: {exc.message}") from None
    except TaskCancelled as exc:
        raise ClientError(str(exc)) from None
    if invocation.as_json:
        write_json({**info.raw, **({"result": result.raw} if result is not None else {})})
        return
    if not invocation.wait:
        _say(_status_line(info))
    if result is not None:
        _print_call(result, info.id, invocation)
    elif info.status == "failed":
        raise ClientError(f"task {info.id} failed: {info.message or 'no reason given'}")


def _status_line(info: TaskInfo) -> str:
    return f"{info.status}: {info.message}" if info.message else info.status


def _say(line: str) -> None:
    sys.stderr.write(printable(f"toolwire: {line}") + "\n")


async def resources(client: Client, invocation: Invocation) -> None:
    """List the resources and resource templates (none if the server does not offer
    resources): two tables, or ``{"resources": [...], "resourceTemplates": [...]}``."""
    offered = "resources" in client.capabilities
    try:
        listed = await client.list_resources() if offered else []
        templates = await client.list_resource_templates() if offered else []
    except ServerError as exc:
        raise ClientError(f"listing the resources failed: {exc}") from None
    if invocation.as_json:
        write_json({"resources": [r.raw for r in listed], "resourceTemplates": [t.raw for t in templates]})
        return
    from .table import print_resources

    print_resources(listed, templates, client.server_info, client.version)


async def read(client: Client, invocation: Invocation) -> None:
    """Read a resource and print its contents (or them as JSON). :class:`ClientError`
    ``resource not found: URI`` (with the server's reason) when the server says it does not
    exist."""
    uri = invocation.subject
    try:
        contents = await client.read_resource(uri)
    except ServerError as exc:
        missing = exc.code == INVALID_PARAMS and isinstance(exc.data, dict) and "uri" in exc.data
        if exc.code == RESOURCE_NOT_FOUND or missing:
            said = exc.message
            if uri in said and said.lower().startswith("resource not found"):
                raise ClientError(f"resource not found: {said[len('resource not found: ') :]}") from None
            raise ClientError(f"resource not found: {uri} ({said})") from None
        raise
    if invocation.as_json:
        write_json([entry.raw for entry in contents])
        return
    print_contents(contents, invocation.out)


async def prompts(client: Client, invocation: Invocation) -> None:
    """List the prompts (none if the server does not offer prompts): a table, or their
    definitions as JSON."""
    listed = await client.list_prompts() if "prompts" in client.capabilities else []
    if invocation.as_json:
        write_json([prompt.raw for prompt in listed])
        return
    from .table import print_prompts

    print_prompts(listed, client.server_info, client.version)


async def prompt(client: Client, invocation: Invocation) -> None:
    """Get a prompt with the ``KEY=VALUE`` arguments (strings) and print its messages (or
    the result as JSON). The server's error when it refuses (a required argument missing,
    say); :class:`ClientError` naming the prompts there are when it has no such prompt."""
    name = invocation.subject
    try:
        result = await client.get_prompt(name, dict(invocation.pairs))
    except ServerError as exc:
        if exc.code == INVALID_PARAMS and "prompts" in client.capabilities:
            _ensure_listed(name, [listed.name for listed in await client.list_prompts()], "prompt")
        raise
    if invocation.as_json:
        write_json(result.raw)
        return
    print_messages(result, name, invocation.out)


ACTIONS: dict[str, Callable[[Client, Invocation], Awaitable[None]]] = {
    "tools": tools,
    "call": call,
    "resources": resources,
    "read": read,
    "prompts": prompts,
    "prompt": prompt,
    "tasks": tasks,
    "task": task,
}


def _ensure_listed(name: str, names: list[str], kind: str) -> None:
    """Nothing if ``name`` is among ``names``; otherwise :class:`ClientError` naming the
    closest of them, or those there are."""
    if name in names:
        return
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        raise ClientError(f"the server has no {kind} named {name!r}: did you mean {close[0]!r}?")
    if not names:
        raise ClientError(f"the server has no {kind} named {name!r}: it has no {kind}s at all")
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    raise ClientError(f"the server has no {kind} named {name!r}; it has {listed}")
