"""A tool: its definition (name, schemas, annotations...) and how to run it.

A :class:`Tool` is built either from a Python function (:meth:`Tool.from_function`: schema
from the signature, description from the docstring) or from a raw JSON Schema and a handler
that takes the arguments dict (:meth:`Tool.from_schema`). Either way :meth:`Tool.call`
validates the arguments against the advertised ``inputSchema`` before the handler runs,
and checks structured results against the ``outputSchema`` after.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypedDict, Unpack

import orjson

from ..auth.identity import scope_set
from ..errors import ToolwireError
from .direct import DirectCall, direct_call
from .results import ToolResult, build_result, raw_result
from .schema import SchemaBuilder
from .signature import parameters_schema, parse_docstring, read_signature
from .tags import tag_set
from .validation import ArgumentsInvalid, Validator

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,128}")

#: Tool annotation hints, by the keyword the decorator takes.
HINTS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


class ToolOptions(TypedDict, total=False):
    """What a tool may be given besides its function or schema: the keywords shared by
    :class:`Tool`, :meth:`Tool.from_function`, :meth:`Tool.from_schema` and
    ``@server.tool(...)`` (defined here once).

    ``title``, ``description``, ``annotations``, ``icons``, ``meta``: its definition's fields
    (the description from the docstring when a function's is not given). ``lenient``: accept
    arguments that JSON Schema's strict reading would refuse (``"3"`` for an integer...);
    ``None``: the default of what builds it. ``timeout`` (seconds) and ``max_concurrency``
    limit its calls (``None``: the server's). ``scopes``: the OAuth scopes a caller needs to
    see and call it. ``task``: ``True``/``"optional"`` lets a client run it as a task,
    ``"required"`` only as one. ``defer_task``: the task starts when the tool awaits
    ``ctx.start_task()``, not before it runs. ``inline``: a plain function called on the event
    loop itself (it never blocks), not on a worker thread.
    """

    title: str | None
    description: str | None
    annotations: dict[str, Any] | None
    icons: list[dict[str, Any]] | None
    meta: dict[str, Any] | None
    lenient: bool | None
    timeout: float | None
    max_concurrency: int | None
    scopes: Iterable[str] | None
    tags: Iterable[str] | None
    version: str | None
    task: bool | str | None
    defer_task: bool
    inline: bool


def _check_options(options: Mapping[str, object]) -> None:
    unknown = options.keys() - ToolOptions.__optional_keys__
    if unknown:
        raise TypeError(f"Tool() got an unexpected keyword argument {min(unknown)!r}")


class ToolContext:
    """Base of the context object a tool may ask for by annotating a parameter with it."""


class OutputInvalid(ToolwireError):
    """A tool with an outputSchema returned no structured content, or content that breaks the
    schema (a server bug: the result is never sent; the client gets -32603)."""


_CO_GENERATOR = 0x20
_CO_COROUTINE = 0x80
_CO_ASYNC_GENERATOR = 0x200


def _code_flags(fn: Any) -> int:
    """The code flags of ``fn`` (a function, bound method or callable object); 0 if it has none."""
    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if code is None:
        call = type(fn).__call__ if callable(fn) else None
        code = getattr(getattr(call, "__func__", call), "__code__", None)
    return code.co_flags if code is not None else 0


def is_coroutine_function(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine (functions, bound methods, callable objects),
    read from the code flags so that registering a tool does not import asyncio."""
    return bool(_code_flags(fn) & _CO_COROUTINE)


def check_name(name: str) -> str:
    """``name`` if it follows the tool-name rules (1-128 of ``A-Z a-z 0-9 _ - .``), else ``ValueError``."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"invalid tool name {name!r}: use 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'")
    return name


class Tool:
    """A tool definition and its handler. Build one with :meth:`from_function` or :meth:`from_schema`."""

    #: Labels that visibility rules pick tools by (server-side only). Set on the instance
    #: only when given: CPython shares the keys of at most 30 instance attributes between
    #: objects of a class, and past that every attribute read of a tool costs more.
    tags: frozenset[str] = frozenset()
    #: Which version of the tool of its name it is (see :mod:`toolwire.server.versions`);
    #: set on the instance only when given, as ``tags``.
    version: str | None = None

    def __init__(
        self,
        name: str,
        handler: Callable[..., Any],
        input_schema: dict[str, Any],
        *,
        output_schema: dict[str, Any] | None = None,
        raw: bool = False,
        converters: dict[str, Callable[[Any], Any]] | None = None,
        context_param: str | None = None,
        **options: Unpack[ToolOptions],
    ) -> None:
        """``options``: see :class:`ToolOptions` (``lenient`` is off unless given)."""
        _check_options(options)
        timeout = options.get("timeout")
        max_concurrency = options.get("max_concurrency")
        task = options.get("task")
        defer_task = options.get("defer_task", False)
        inline = options.get("inline", False)
        if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
            raise ValueError(f'tool {name!r}: inputSchema must be a JSON Schema object with "type": "object"')
        self.name = check_name(name)
        self.handler = handler
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.description = options.get("description")
        self.title = options.get("title")
        self.annotations = options.get("annotations")
        self.icons = options.get("icons")
        self.meta = options.get("meta")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"tool {name!r}: timeout must be a number of seconds above 0")
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"tool {name!r}: max_concurrency must be 1 or more")
        #: Seconds a call may run before it is cancelled; calls running at once (``None``: the server's).
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        #: OAuth scopes a caller needs to see and call it (HTTP with ``auth=``).
        self.scopes = scope_set(name, options.get("scopes"))
        version = options.get("version")
        if version is not None:
            if not isinstance(version, str) or not version:
                raise ValueError(f"tool {name!r}: version must be a non-empty string, not {version!r}")
            self.version = version
        tags = options.get("tags")
        if tags:  # else the class's empty set: one attribute less keeps calls fast (see tags)
            self.tags = tag_set(f"tool {name!r}", tags)
        #: Whether it runs as a task: ``"optional"``, ``"required"`` or ``None`` (never).
        self.task = _task_support(name, task)
        if defer_task and (self.task is None or context_param is None):
            raise ValueError(
                f"tool {name!r}: defer_task needs task support and a Context parameter (to start the task)"
            )
        #: The task starts when the tool calls ``ctx.start_task()``, not before it runs.
        self.defer_task = defer_task
        #: The server it was registered on (a mounted tool keeps its own): whose lifespan it sees.
        self.owner: Any = None
        self.enabled = True
        self.is_async = is_coroutine_function(handler)
        if inline and self.is_async:
            raise ValueError(f"tool {name!r}: inline=True is for plain functions (async ones run on the loop already)")
        #: A plain function called on the event loop itself (its author vouches that it never blocks).
        self.inline = inline
        self._raw = raw
        self._converters = converters or {}
        self._context_param = context_param
        #: Whether the handler takes a :class:`ToolContext`.
        self.wants_context = context_param is not None
        self._params = frozenset(input_schema.get("properties", ()))
        #: Checks the arguments against ``input_schema`` (see :meth:`validate_arguments`).
        self.input_validator = Validator(input_schema, lenient=bool(options.get("lenient")))
        #: Whether the handler is an ``async def`` taking the arguments as they are (no
        #: converters, no context, the base class's :meth:`invoke`): :meth:`invoke` then
        #: calls it with them, once they are among its parameters.
        plain = self.is_async and not raw and not self._converters and context_param is None
        self._plain = plain and type(self).invoke is Tool.invoke
        #: What calling such a handler at once takes, when its schema has a flat form
        #: (``handler(**arguments)``, once :meth:`DirectCall.takes` the arguments); ``None`` otherwise.
        self.direct: DirectCall | None = direct_call(handler, self._params, input_schema) if self._plain else None
        self._output = Validator(output_schema) if output_schema is not None else None
        #: Whether a call's coroutine is the handler's own (an ``async def`` without a context):
        #: the session then makes the answer from what it returns (``calls.answer_call``).
        self.alone = self.is_async and context_param is None
        #: Whether a ``str`` the handler returns is the whole result: one text block (no raw
        #: result, no output schema). Its answer is then written around the text's encoding.
        self.text_results = not raw and output_schema is None
        #: Parameters mirrored into ``Mcp-Param-*`` HTTP headers (2026-07-28): name -> path.
        self.header_parameters = _header_parameters(name, input_schema)
        #: Legacy versions need non-object structured content wrapped in ``{"result": ...}``.
        self.wrap_structured = output_schema is not None and output_schema.get("type") != "object"
        self.definition = self._definition()

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        output_schema: dict[str, Any] | type | None = None,
        structured_output: bool | None = None,
        **options: Unpack[ToolOptions],
    ) -> Tool:
        """A tool from a function's signature and docstring.

        A generator function (``def`` or ``async def`` with ``yield``) runs to its end and
        answers with the list of what it yielded (its outputSchema an array of ``T`` when
        annotated ``Iterator[T]``, ``AsyncIterator[T]``, ``Generator[T, ...]``...); unless it
        takes a Context (and reports progress itself), each item is a progress step.

        ``structured_output`` decides whether the return value is also sent as
        ``structuredContent`` with an ``outputSchema``: by default, yes for every return
        annotation except ``str``, ``None``, ``Any``, content blocks and :class:`ToolResult`.
        ``output_schema`` overrides the schema: a dict as given, or a type to build it from
        (for a tool that returns a :class:`ToolResult` with text of its own).
        ``options``: see :class:`ToolOptions` (``lenient`` is on unless given ``False``).
        ``TypeError`` if a parameter or return type has no JSON Schema.
        """
        if options.get("lenient") is None:
            options["lenient"] = True
        signature = read_signature(fn)
        docs = parse_docstring(fn.__doc__)
        if options.get("description") is None:
            options["description"] = docs.description
        context_param = None
        parameters = []
        for parameter in signature.parameters:
            if isinstance(parameter.annotation, type) and issubclass(parameter.annotation, ToolContext):
                context_param = parameter.name
            else:
                parameters.append(parameter)
        input_schema, converters = parameters_schema(parameters, docs, SchemaBuilder())
        returns, handler = signature.returns, fn
        flags = _code_flags(fn)
        if flags & (_CO_GENERATOR | _CO_ASYNC_GENERATOR):
            returns = _items_type(returns)
            handler = _collecting(fn, bool(flags & _CO_ASYNC_GENERATOR), context_param is not None)
            if not options.get(
                "defer_task"
            ):  # which needs the function's own Context (the constructor refuses it without)
                context_param = context_param or _ITEMS_CONTEXT
        if isinstance(output_schema, type):
            output_schema = _output_schema(output_schema)
        elif output_schema is None and _wants_structured(returns, structured_output):
            output_schema = _output_schema(returns)
        return cls(
            name or str(getattr(fn, "__name__", type(fn).__name__)),
            handler,
            input_schema,
            output_schema=output_schema,
            converters=converters,
            context_param=context_param,
            **options,
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        input_schema: dict[str, Any],
        handler: Callable[..., Any],
        *,
        output_schema: dict[str, Any] | None = None,
        **options: Unpack[ToolOptions],
    ) -> Tool:
        """A low-level tool: ``handler(arguments)`` or ``handler(arguments, context)`` gets the
        validated arguments dict and may return a value, content blocks or a whole result dict.
        ``SchemaError`` (when first called) if ``input_schema`` is not a valid JSON Schema."""
        code = getattr(getattr(handler, "__func__", handler), "__code__", None)
        wants_context = code is not None and code.co_argcount - hasattr(handler, "__func__") >= 2
        context_param = "" if wants_context else None
        return cls(
            name, handler, input_schema, output_schema=output_schema, raw=True, context_param=context_param, **options
        )

    @classmethod
    def from_tool(
        cls,
        tool: Tool,
        *,
        name: str | None = None,
        hide: Mapping[str, Any] | None = None,
        defaults: Mapping[str, Any] | None = None,
        tags: Iterable[str] | None = None,
        **described: Any,
    ) -> Tool:
        """A tool derived from ``tool`` without copying its code: renamed, with ``title``,
        ``description``, ``annotations``, ``icons``, ``meta`` or ``tags`` replaced, arguments
        hidden (``hide={"arg": fixed_value}``: gone from the schema, every call gets the
        value) or given ``defaults``. See :func:`toolwire.tools.transform.derive` (its errors)."""
        from .transform import derive

        return derive(tool, name=name, hide=hide, defaults=defaults, tags=tags, **described)

    def _definition(self) -> dict[str, Any]:
        """The neutral (newest-version) definition; codecs trim it per version."""
        definition: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            definition["title"] = self.title
        if self.description is not None:
            definition["description"] = self.description
        definition["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        if self.annotations:
            definition["annotations"] = self.annotations
        if self.icons:
            definition["icons"] = self.icons
        if self.meta:
            definition["_meta"] = self.meta
        return definition

    def validate_arguments(self, arguments: Any, message: str = "Invalid arguments for tool '{}'") -> dict[str, Any]:
        """The arguments, checked (and coerced where lenient); :class:`ArgumentsInvalid` if not
        valid, its text starting with ``message`` (formatted with the name)."""
        if arguments is None:
            arguments = {}
        return self.input_validator.check(arguments, message, self.name)  # type: ignore[no-any-return]

    async def call(self, arguments: dict[str, Any], context: ToolContext | None = None) -> dict[str, Any]:
        """Run the tool on already validated ``arguments``; returns the neutral result.

        Exceptions from the handler propagate (the server decides how to report them);
        :class:`OutputInvalid` if the tool has an outputSchema and a successful result has no
        structured content, or structured content that breaks it.
        """
        return self.result(await self.invoke(arguments, context))

    def result(self, value: Any) -> dict[str, Any]:
        """The neutral result for what the handler returned (see :meth:`call`, which is
        :meth:`invoke` then this); :class:`OutputInvalid` as there."""
        output = self._output
        if self._raw:
            result = raw_result(value, structured=output is not None)
        elif output is None:
            if type(value) is str:  # build_result's first case, without the call
                return {"content": [{"type": "text", "text": value}]}
            return build_result(value, structured=False)
        else:
            result = build_result(value, structured=not isinstance(value, ToolResult))
        if output is not None and not result.get("isError"):
            if "structuredContent" not in result:
                raise OutputInvalid(f"tool '{self.name}' has an outputSchema but returned no structured content")
            try:
                output.check(result["structuredContent"], "tool '{}' returned invalid structured content", self.name)
            except ArgumentsInvalid as exc:
                raise OutputInvalid(str(exc)) from None
        return result

    def invoke(self, arguments: dict[str, Any], context: ToolContext | None = None, loop: Any = None) -> Awaitable[Any]:
        """The handler's return value, as is, for already validated ``arguments`` (converted
        to the parameters' types); a plain function runs on a worker thread (see
        :mod:`toolwire.tools.threads`) unless the tool is ``inline``. ``loop``: the running
        event loop, if the caller has it at hand (else a plain function's call looks it up)."""
        if self._plain and arguments.keys() <= self._params:
            return self.handler(**arguments)  # type: ignore[no-any-return]
        if self._raw:
            args: tuple[Any, ...] = (arguments,) if self._context_param is None else (arguments, context)
            kwargs: dict[str, Any] = {}
        else:
            args, kwargs = (), arguments
            if self._converters or not arguments.keys() <= self._params:
                kwargs = self._convert(arguments)
            if self._context_param is not None:
                kwargs = {**kwargs, self._context_param: context}
        if self.is_async:
            return self.handler(*args, **kwargs)  # type: ignore[no-any-return]
        if self.inline:
            return _returned(self.handler(*args, **kwargs))
        return (_run_sync_on or _load_run_sync_on())(loop, self.handler, *args, **kwargs)

    def _convert(self, arguments: dict[str, Any]) -> dict[str, Any]:
        converters = self._converters
        return {
            key: converters[key](value) if key in converters else value
            for key, value in arguments.items()
            if key in self._params
        }


#: The keyword under which a generator tool that takes no Context gets one (for its progress).
_ITEMS_CONTEXT = "__toolwire_items_context"

_ITERATORS = frozenset({"Iterator", "Iterable", "Generator", "AsyncIterator", "AsyncIterable", "AsyncGenerator"})


def _items_type(returns: Any) -> Any:
    """What a generator function returns, as a tool: ``list[T]`` for ``Iterator[T]`` and the
    like, ``Any`` (no outputSchema) for any other hint."""
    import typing

    origin = typing.get_origin(returns)
    args = typing.get_args(returns)
    if args and getattr(origin, "__module__", None) == "collections.abc" and origin.__name__ in _ITERATORS:
        return list[args[0]]  # type: ignore[valid-type]
    return Any


def _collecting(fn: Callable[..., Any], is_async: bool, takes_context: bool) -> Callable[..., Any]:
    """A handler that runs generator function ``fn`` to its end and returns the list of its
    items; when ``fn`` takes no context, the handler takes one as ``_ITEMS_CONTEXT`` and
    reports each item as a step of progress. What ``fn`` raises propagates."""

    def progress(kwargs: dict[str, Any]) -> Callable[[int], Any] | None:
        context = None if takes_context else kwargs.pop(_ITEMS_CONTEXT, None)
        return getattr(context, "report_progress", None)

    if is_async:

        async def collect_async(*args: Any, **kwargs: Any) -> list[Any]:
            report = progress(kwargs)
            items: list[Any] = []
            async for item in fn(*args, **kwargs):
                items.append(item)
                if report is not None:
                    report(len(items))
            return items

        return collect_async

    def collect(*args: Any, **kwargs: Any) -> list[Any]:
        report = progress(kwargs)
        items: list[Any] = []
        for item in fn(*args, **kwargs):
            items.append(item)
            if report is not None:
                report(len(items))
        return items

    return collect


async def _returned(value: Any) -> Any:
    return value


_run_sync_on: Callable[..., Awaitable[Any]] | None = None


def _load_run_sync_on() -> Callable[..., Awaitable[Any]]:
    """:func:`toolwire.tools.threads.run_sync_on`, imported at the first sync call (it imports
    asyncio, which a server registering its tools does not need yet)."""
    global _run_sync_on
    from .threads import run_sync_on

    _run_sync_on = run_sync_on
    return run_sync_on


def _task_support(name: str, task: bool | str | None) -> str | None:
    """``task=`` as ``"optional"``, ``"required"`` or ``None``; ``ValueError`` for anything else."""
    if task is True or task == "optional":
        return "optional"
    if task == "required":
        return "required"
    if task is None or task is False or task == "forbidden":
        return None
    raise ValueError(f'tool {name!r}: task must be True, False, "optional", "required" or "forbidden", not {task!r}')


def _header_parameters(name: str, input_schema: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The tool's ``x-mcp-header`` annotations; ``ValueError`` naming the tool if invalid."""
    try:  # a quick look first: most schemas do not mention the keyword at all
        mentioned = b"x-mcp-header" in orjson.dumps(input_schema, default=_as_null)
    except orjson.JSONEncodeError:  # keys that are not strings, say: walk it
        mentioned = True
    if not mentioned:
        return {}
    from ..protocol.http_headers import InvalidHeaderAnnotation, header_parameters

    try:
        return header_parameters(input_schema)
    except InvalidHeaderAnnotation as exc:
        raise ValueError(f"tool {name!r}: {exc}") from None


def _as_null(value: Any) -> None:
    """The quick look's ``default``: a value JSON has no form for becomes ``null`` (the walk
    looks into dicts and lists only, which JSON encodes)."""
    return None


def _output_schema(returns: Any) -> dict[str, Any]:
    """The outputSchema of a return type; a named object type is inlined at the root, so that
    it stays an object schema (which every version with structured output accepts)."""
    import orjson

    builder = SchemaBuilder()
    schema = dict(builder.compile(returns).schema)
    defs = builder.defs
    ref = schema.get("$ref", "")
    if len(schema) == 1 and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        schema = dict(defs[name])
        others = {key: value for key, value in defs.items() if key != name}
        if ref.encode() not in orjson.dumps(others) and ref.encode() not in orjson.dumps(schema):
            defs = others
    if defs:
        schema["$defs"] = defs
    return schema


def _wants_structured(returns: Any, choice: bool | None) -> bool:
    if choice is not None:
        return choice
    if returns is Any or returns is str or returns is None or returns is type(None):
        return False
    from .content import Content

    if isinstance(returns, type) and issubclass(returns, (Content, ToolResult)):
        return False
    import typing

    args = typing.get_args(returns)
    is_blocks = (
        typing.get_origin(returns) is list and args and isinstance(args[0], type) and issubclass(args[0], Content)
    )
    return not is_blocks


def annotations_from(hints: dict[str, bool | None], extra: dict[str, Any] | None) -> dict[str, Any] | None:
    """Tool annotations from the decorator's keywords (``read_only=`` ...) and a raw dict."""
    out = dict(extra or {})
    for keyword, key in HINTS.items():
        value = hints.get(keyword)
        if value is not None:
            out[key] = value
    return out or None
