"""The :class:`Host`: many MCP servers, one namespace of tools, and the requests servers make.

    async with Host(["examples/seed_server.py"], provider=OpenAIProvider("deepseek-chat", ...)) as host:
        conversation = host.conversation(system="You are a helpful assistant.")
        async for event in conversation.send("4 加 4 等于多少"):
            ...

The host connects to every server at start (one that fails is reported in
:attr:`Host.servers` and left out; the others serve). It keeps their tools in one namespace
(:mod:`.naming`), follows their ``list_changed`` notifications (the list is fetched again
before the model's next request) and withdraws the tools of a server that stops. Tools
meant only for an MCP Apps view (``_meta.ui.visibility`` without ``"model"``) are never
handed to the model.

With more tools than :attr:`ToolDeferral.threshold` (40 unless ``defer_tools`` says
otherwise), a conversation shows the model only some of them and a tool of the host's own,
``find_tools``, to find and load the others (:mod:`.deferral`); :meth:`Host.search_tools`
ranks the tools for a request.

A server's skills (SEP-2640) are listed at connection and offered to the model through a
tool of the host's own, ``load_skill`` (:mod:`.skills`): their names and descriptions up
front, a skill's body when the model loads it, its files through ``read_resource``.

With ``code_mode`` (:mod:`.code_mode`), the model is offered one tool of the host's own,
``run_code``, instead of the servers' tools: it writes a Python program that calls them, run
in a sandbox (:mod:`.sandbox`); :meth:`Host.start` raises
:class:`~.sandbox.SandboxUnavailable` (saying what to install) when the sandbox cannot run.

Servers' own requests are served by the host, for the turn in progress (see
:mod:`.events`): ``sampling/createMessage`` goes to the host's model once the person allows
it, ``elicitation/create`` is asked of the person, ``roots/list`` is answered with
``roots`` (default: the working directory). Outside a turn, sampling is refused and
elicitation declined.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..apps.visibility import visible_to_model
from ..client import CallToolResult, Client, ClientError, ResourceLink, ServerError, SkillEntry, ToolInfo
from ..extras import ExtraMissing, require
from ..logs import get_logger
from ..lookalikes import marks
from ..protocol.versions import SKILLS_EXTENSION
from .approval import ApprovalPolicy
from .code_mode import RUN_CODE, offered_code
from .deferral import DEFER_TOOLS, FIND_TOOLS, Pair, ToolDeferral, discovery_spec
from .events import ElicitationNeeded, ExposedTool, SamplingNeeded
from .model import ModelError, ModelRequest, Provider, ToolSpec, text_part
from .naming import expose
from .resources import LIST_RESOURCES, listed_text, lister_spec
from .results import MAX_RESULT_CHARS
from .sandbox import SandboxLimits, check_sandbox
from .schemas import for_model
from .servers import ServerSpec, check_name, load_config, spec_for, unique_names
from .skills import LOAD_SKILL, OfferedSkill, loaded_text, loader_spec, offered_skills

if TYPE_CHECKING:
    from ..discovery import ToolIndex, ToolMatch
    from .conversation import Conversation, Turn

log = get_logger("toolwire.host")

#: The name of the host's own tool that reads a resource (a link a tool returned, say).
READ_RESOURCE = "read_resource"
#: The approval name of reading a resource: ``SERVER/resources/read`` in patterns.
READ_RESOURCE_TOOL = ToolInfo.from_dict({"name": "resources/read", "annotations": {"readOnlyHint": True}})


@dataclass(slots=True)
class HostServer:
    """A server of the host: its spec, its client while connected, its tools, and ``error``
    (why it could not start, or why it stopped)."""

    spec: ServerSpec
    client: Client | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    skills: list[SkillEntry] = field(default_factory=list)
    error: str | None = None
    stale: bool = False

    @property
    def alive(self) -> bool:
        return self.client is not None and self.error is None

    @property
    def reads_resources(self) -> bool:
        return self.alive and self.client is not None and "resources" in self.client.capabilities


class Host:
    """Connects to MCP servers and hands their tools to a model (see the module's description).

    ``servers``: targets, :class:`ServerSpec` objects, or an ``mcpServers`` config (a dict);
    ``provider``: the model (:mod:`.providers`); ``policy``: who decides about calls
    (:class:`ApprovalPolicy`; servers marked trusted are added to its ``trusted``);
    ``call_timeout``: seconds a call may go without an answer or progress;
    ``max_result_chars``: the cap on a result's text the model reads; ``roots``: offered to
    servers (default: the working directory); ``client_options``: more ``Client`` options;
    ``defer_tools``: when the model is shown only some tools and finds the others
    (:class:`ToolDeferral`; ``None``: it is shown every tool always; code mode shows none);
    ``list_resources``: offer the model a tool listing a server's resources (see
    :mod:`.resources`); ``code_mode``: ``True`` (or the :class:`SandboxLimits` of its programs)
    offers the model ``run_code`` instead of the servers' tools (see :mod:`.code_mode`).
    ``ValueError`` for a
    rule of ``policy`` or a pinned rule of ``defer_tools`` that cannot be used.
    """

    def __init__(
        self,
        servers: Iterable[Any] | dict[str, Any] = (),
        *,
        provider: Provider | None = None,
        policy: ApprovalPolicy | None = None,
        call_timeout: float = 120.0,
        max_result_chars: int = MAX_RESULT_CHARS,
        roots: list[dict[str, Any]] | None = None,
        client_options: dict[str, Any] | None = None,
        defer_tools: ToolDeferral | None = DEFER_TOOLS,
        list_resources: bool = True,
        code_mode: bool | SandboxLimits = False,
    ) -> None:
        specs = load_config(servers) if isinstance(servers, dict) else [spec_for(target) for target in servers]
        for spec in specs:
            check_name(spec.name)
        self.servers: dict[str, HostServer] = {spec.name: HostServer(spec) for spec in unique_names(specs)}
        self.provider = provider
        self.policy = policy or ApprovalPolicy()
        self.policy.check(self.servers)
        self.policy.trusted |= {spec.name for spec in specs if spec.trusted}
        #: What the host said about its rules (a bare allow rule that matches tools of several
        #: servers), each once, in order.
        self.warnings: list[str] = []
        self.call_timeout = call_timeout
        self.max_result_chars = max_result_chars
        cwd = Path.cwd()
        self.roots = roots if roots is not None else [{"uri": cwd.as_uri(), "name": cwd.name or str(cwd)}]
        self.client_options = client_options or {}
        self.deferral = defer_tools
        self.lists_resources = list_resources
        if defer_tools is not None:
            defer_tools.rules()
        #: The limits of code mode's programs, or ``None`` when code mode is off.
        self.code_limits = code_mode if isinstance(code_mode, SandboxLimits) else SandboxLimits() if code_mode else None
        #: In code mode, the model's name of each tool by its function's name in a program.
        self.functions: dict[str, str] = {}
        #: Every tool the servers offer, as the model would call it.
        self.tools: list[ExposedTool] = []
        #: Every definition, as sent to the model when nothing is deferred.
        self.specs: list[ToolSpec] = []
        #: Every skill the servers offer, as the model is offered it (see :mod:`.skills`).
        self.skills: list[OfferedSkill] = []
        self._skills_left_out: list[str] = []
        self._names: dict[str, tuple[str, str]] = {}
        self._exposed: dict[Pair, str] = {}
        self._specs: dict[Pair, ToolSpec] = {}
        self._index: ToolIndex | None = None
        self._searchable: bool | None = None
        self._marks: dict[tuple[str, str], str] = {}
        self._links: dict[str, str] = {}
        self._changes: list[str] = []
        self._turns: list[Turn] = []

    async def __aenter__(self) -> Host:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- servers ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to every server at once and list their tools; a server that fails gets its
        ``error`` set and is left out (this never raises for one). In code mode,
        :class:`~.sandbox.SandboxUnavailable` first if programs cannot be sandboxed here."""
        if self.code_limits is not None:
            await check_sandbox(self.code_limits)
        await asyncio.gather(*(self._connect(server) for server in self.servers.values()))
        self._expose()
        self._changes.clear()

    async def _connect(self, server: HostServer) -> None:
        spec = server.spec
        client = Client(
            spec.target,
            env=spec.env,
            cwd=spec.cwd,
            headers=spec.headers,
            name="toolwire-host",
            sampling=lambda params: self._sample(spec.name, params),
            elicitation=lambda params: self._elicit(spec.name, params),
            roots=self.roots,
            on_tools_changed=lambda: self._tools_changed(spec.name),
            on_close=lambda reason: self._stopped(spec.name, reason),
            **{**self.client_options, **spec.options},
        )
        try:
            await client.connect()
            server.client = client
            server.tools = await client.list_tools()
            server.skills = await _listed_skills(spec.name, client)
        except ClientError as exc:
            server.error = str(exc)
            await client.close()
            server.client = None

    async def close(self) -> None:
        """Disconnect from every server and close the provider's connections."""
        clients = [server.client for server in self.servers.values() if server.client is not None]
        for server in self.servers.values():
            server.client = None
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
        if self.provider is not None:
            await self.provider.close()

    def _tools_changed(self, name: str) -> None:
        self.servers[name].stale = True

    def _stopped(self, name: str, reason: str) -> None:
        server = self.servers[name]
        if server.error is None:
            server.error = reason
            server.tools = []
            self._changes.append(f"the server {name!r} stopped: {reason}")
            self._expose()

    async def refresh(self) -> list[str]:
        """Fetch again the tools of servers that announced a change; returns what changed
        since the last call (empty: nothing), and rebuilds the namespace if anything did."""
        await self._relist()
        changes, self._changes = self._changes, []
        return changes

    async def _relist(self) -> None:
        """Fetch again the tools of servers that announced a change (what changed is kept
        for :meth:`refresh` to return)."""
        stale = [server for server in self.servers.values() if server.stale and server.alive]
        for server in stale:
            server.stale = False
            assert server.client is not None
            try:
                server.tools = await server.client.list_tools(refresh=True)
                self._changes.append(f"the server {server.spec.name!r} changed its tools")
            except ClientError as exc:
                log.warning("listing the tools of %s again failed: %s", server.spec.name, exc)
        if stale:
            self._expose()

    def _expose(self) -> None:
        """Rebuild the namespace and what the model is shown, from the live servers' tools."""
        pairs = [
            (name, tool.name)
            for name, server in self.servers.items()
            if server.alive
            for tool in server.tools
            if visible_to_model(tool.meta)  # MCP Apps: a tool only its view may call is not the model's
        ]
        self._names = expose(pairs)
        self._marks = marks(pairs)
        for said in self.policy.ambiguous(pairs):
            self._warn(said)
        by_pair = {(name, tool.name): tool for name, server in self.servers.items() for tool in server.tools}
        self.tools, self.specs, self._index = [], [], None
        self._exposed = {pair: exposed for exposed, pair in self._names.items()}
        self._specs = {}
        for exposed, pair in self._names.items():
            tool = by_pair[pair]
            parameters, note = for_model(tool.input_schema)
            description = tool.description or tool.display_name
            self._specs[pair] = ToolSpec(exposed, f"{description}\n\n{note}" if note else description, parameters)
            self.specs.append(self._specs[pair])
            self.tools.append(
                ExposedTool(
                    exposed,
                    pair[0],
                    tool.name,
                    description,
                    tool.annotations.get("readOnlyHint") is True,
                    pair[0] in self.policy.trusted,
                    self._marks.get(pair, ""),
                )
            )
        self.specs += self._resource_specs()
        self.skills, self._skills_left_out = offered_skills(
            {name: server.skills for name, server in self.servers.items() if server.alive}
        )
        for said in self._skills_left_out:
            self._warn(said)
        if self.skills:
            self.specs.append(loader_spec(self.load_skill_name, self.skills, self._skills_left_out))
        if self.code_limits is not None:
            tools = {name: by_pair[pair] for name, pair in self._names.items()}
            self.functions, self.specs = offered_code(tools, self.specs, self.run_code_name, self.code_limits)
        self._check_search()

    def _warn(self, said: str) -> None:
        """Say ``said`` (once: in :attr:`warnings`, in what :meth:`refresh` returns, and in the log)."""
        if said not in self.warnings:
            self.warnings.append(said)
            self._changes.append(said)
            log.warning("%s", said)

    def _check_search(self) -> None:
        """Warn once when deferral applies but the ``search`` extra that ranks tools is missing."""
        if self._searchable is not None or not self._may_defer():
            return
        try:
            require("search", "deferred loading of tools")
            self._searchable = True
        except ExtraMissing as exc:
            self._searchable = False
            said = f"{len(self.tools)} tools: every definition is sent to the model, since {exc}"
            self.warnings.append(said)
            self._changes.append(said)
            log.warning("%s", said)

    def _may_defer(self) -> bool:
        return self.deferral is not None and self.code_limits is None and self.deferral.applies(len(self.tools))

    def _resource_specs(self) -> list[ToolSpec]:
        """The host's resource tools, when a server has resources: the reader, the lister."""
        readers = [name for name, server in self.servers.items() if server.reads_resources]
        if not readers:
            return []
        specs = [self._read_resource_spec(readers)]
        if self.lists_resources:
            specs.append(lister_spec(self.list_resources_name, readers))
        return specs

    def _read_resource_spec(self, readers: list[str]) -> ToolSpec:
        parameters = {
            "type": "object",
            "properties": {
                "uri": {"type": "string", "description": "The URI of the resource, as a tool or the user gave it"},
                "server": {"type": "string", "enum": readers, "description": "Which server has it, if known"},
            },
            "required": ["uri"],
        }
        return ToolSpec(
            self.read_resource_name, "Read a resource of an MCP server (a link a tool returned).", parameters
        )

    # -- deferred loading and search -------------------------------------------------------

    @property
    def deferring(self) -> bool:
        """Whether the model is shown only some tools now (see :mod:`.deferral`)."""
        return self._may_defer() and self._searchable is True

    @property
    def find_tools_name(self) -> str:
        """The model's name of the host's discovery tool (prefixed if a server took it)."""
        return self._own_name(FIND_TOOLS)

    def _own_name(self, name: str) -> str:
        """The model's name of the host's own tool ``name``: the first of ``name``,
        ``host__name``, ``host__name_2``, ... that no server's tool has (so that the names
        the model sees are unique whatever the servers call their tools)."""
        candidates = itertools.chain([name, f"host__{name}"], (f"host__{name}_{n}" for n in itertools.count(2)))
        return next(candidate for candidate in candidates if candidate not in self._names)

    def exposed(self, server: str, name: str) -> ExposedTool | None:
        """The tool ``name`` of ``server`` as the model is offered it, or ``None``."""
        exposed = self._exposed.get((server, name))
        return next((tool for tool in self.tools if tool.name == exposed), None) if exposed else None

    def specs_for(self, shown: Iterable[Pair]) -> list[ToolSpec]:
        """The definitions of a request that shows the tools ``shown`` (in the order the
        host offers them), then the host's own tools: the resource reader if any server
        has resources, and the discovery tool."""
        wanted = set(shown)
        specs = [spec for pair, spec in self._specs.items() if pair in wanted]
        specs += self._resource_specs()
        assert self.deferral is not None
        if self.skills:
            specs.append(loader_spec(self.load_skill_name, self.skills, self._skills_left_out))
        counts = {name: len(server.tools) for name, server in self.servers.items() if server.alive}
        specs.append(discovery_spec(self.find_tools_name, counts, self.deferral.found))
        return specs

    async def search_tools(self, query: str, limit: int = 10) -> list[ToolMatch]:
        """The ``limit`` tools of the connected servers that best fit ``query``, best first
        (a server that announced a change is listed again first). Needs the ``search``
        extra: :class:`~toolwire.extras.ExtraMissing` naming it otherwise."""
        await self._relist()
        if self._index is None:
            from ..discovery import ToolIndex

            by_pair = {(name, tool.name): tool for name, server in self.servers.items() for tool in server.tools}
            self._index = ToolIndex([(pair[0], by_pair[pair]) for pair in self._names.values()])
        return self._index.search(query, limit)

    @property
    def run_code_name(self) -> str:
        """The model's name of code mode's tool (prefixed if a server took it)."""
        return self._own_name(RUN_CODE)

    # -- skills ----------------------------------------------------------------------------

    @property
    def load_skill_name(self) -> str:
        """The model's name of the host's skill loader (prefixed if a server took it)."""
        return self._own_name(LOAD_SKILL)

    async def load_skill(self, name: str) -> str:
        """What the model reads on loading the skill it calls ``name``: its ``SKILL.md``
        read and verified, with where it comes from. ``ValueError`` for a name no server
        offers; :class:`~toolwire.client.SkillVerificationFailed` (a ``ClientError``) for a
        skill that is not what its listing says, and what else the client raises."""
        skill = next((skill for skill in self.skills if skill.name == name), None)
        if skill is None:
            names = ", ".join(skill.name for skill in self.skills) or "none"
            raise ValueError(f"there is no skill named {name!r}; the skills are: {names}")
        loaded = await self._client(skill.server).load_skill(skill.entry)
        return loaded_text(skill, loaded, self.read_resource_name)

    def _skill_of(self, server: str, uri: str) -> SkillEntry | None:
        """The skill of ``server`` whose folder holds ``uri``, or ``None``."""
        entries = self.servers[server].skills
        return next((entry for entry in entries if uri.startswith(entry.root + "/")), None)

    @property
    def read_resource_name(self) -> str:
        """The model's name of the host's resource reader (prefixed if a server took it)."""
        return self._own_name(READ_RESOURCE)

    @property
    def list_resources_name(self) -> str:
        """The model's name of the host's resource lister (prefixed if a server took it)."""
        return self._own_name(LIST_RESOURCES)

    def resolve(self, exposed: str) -> tuple[str, ToolInfo] | None:
        """The server and tool behind a name the model used, or ``None``."""
        pair = self._names.get(exposed)
        if pair is None:
            return None
        server = self.servers[pair[0]]
        tool = next((tool for tool in server.tools if tool.name == pair[1]), None)
        return None if tool is None or not server.alive else (pair[0], tool)

    @property
    def offered(self) -> list[tuple[str, str]]:
        """Every ``(server, tool name)`` the model is offered."""
        return list(self._names.values())

    def mark(self, server: str, name: str) -> str:
        """Why the name of the tool ``name`` of ``server`` may fool a person, or ``""``
        (see :func:`.lookalikes.marks`)."""
        return self._marks.get((server, name), "")

    # -- calls -----------------------------------------------------------------------------

    async def call(self, server: str, name: str, arguments: dict[str, Any], progress: Any = None) -> CallToolResult:
        """Call a tool of ``server``; raises what :meth:`Client.call_tool` raises."""
        client = self._client(server)
        result = await client.call_tool(name, arguments, progress=progress, timeout=self.call_timeout)
        for block in result.content:
            if isinstance(block, ResourceLink):
                self._links[block.uri] = server
        return result

    def _client(self, server: str) -> Client:
        entry = self.servers[server]
        if entry.client is None or entry.error is not None:
            raise ClientError(f"the server {server!r} is not connected: {entry.error or 'closed'}")
        return entry.client

    def resource_server(self, uri: str | None, named: str | None) -> str:
        """Which server to read ``uri`` from (``None``: to list the resources of): the one
        named, the one whose tool linked it, or the only one that has resources.
        ``ValueError`` saying what to do otherwise."""
        readers = [name for name, server in self.servers.items() if server.reads_resources]
        if named is not None:
            if named not in readers:
                raise ValueError(f"no connected server {named!r} has resources; these do: {', '.join(readers)}")
            return named
        if uri in self._links and self._links[uri] in readers:
            return self._links[uri]
        if len(readers) == 1:
            return readers[0]
        which = f"has {uri!r}" if uri is not None else "to list"
        raise ValueError(f"say which server {which}: one of {', '.join(readers)}")

    async def list_resources(self, server: str) -> str:
        """The resources and templates of ``server`` as the model reads them (see
        :mod:`.resources`); raises what the client raises."""
        client = self._client(server)
        return listed_text(server, await client.list_resources(), await client.list_resource_templates())

    async def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]:
        """The parts of a resource as a model reads them; raises what the client raises (a
        file of a skill is verified against the skill's listing)."""
        skill = self._skill_of(server, uri)
        if skill is not None:
            data = await self._client(server).read_skill_file(skill, uri)
            try:
                return [text_part(f"Resource {uri}:\n{data.decode('utf-8')}")]
            except UnicodeDecodeError:
                return [text_part(f"Resource {uri}: binary contents ({len(data)} bytes), not shown")]
        parts: list[dict[str, Any]] = []
        for entry in await self._client(server).read_resource(uri):
            header = f"Resource {entry.uri}" + (f" ({entry.mime_type})" if entry.mime_type else "")
            if entry.text is not None:
                parts.append(text_part(f"{header}:\n{entry.text}"))
            elif entry.blob is not None and (entry.mime_type or "").startswith(("image/", "audio/")):
                kind = "image" if entry.mime_type and entry.mime_type.startswith("image/") else "audio"
                parts += [text_part(f"{header}:"), {"type": kind, "data": entry.blob, "mime_type": entry.mime_type}]
            else:
                parts.append(text_part(f"{header}: binary contents, not shown"))
        return parts or [text_part(f"Resource {uri} is empty")]

    # -- conversations and the servers' requests -------------------------------------------

    def conversation(self, system: str | None = None, **options: Any) -> Conversation:
        """A new conversation with this host's model and tools (see :class:`Conversation`)."""
        from .conversation import Conversation

        return Conversation(self, system=system, **options)

    def attach(self, turn: Turn) -> None:
        self._turns.append(turn)

    def detach(self, turn: Turn) -> None:
        if turn in self._turns:
            self._turns.remove(turn)

    async def _sample(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        if not self._turns or self.provider is None:
            raise ServerError(-1, "sampling is refused: no conversation is in progress to ask the user")
        turn = self._turns[-1]
        if not await turn.ask(SamplingNeeded(server, params)):
            raise ServerError(-1, "the user refused the sampling request")
        request = ModelRequest(
            messages=[
                _sampling_message(message) for message in params.get("messages") or [] if isinstance(message, dict)
            ],
            system=params.get("systemPrompt") if isinstance(params.get("systemPrompt"), str) else None,
            max_tokens=params.get("maxTokens") if isinstance(params.get("maxTokens"), int) else None,
        )
        try:
            answer = await turn.sample(request)
        except ModelError as exc:
            raise ServerError(-1, f"the host's model failed: {exc}") from None
        stop = {"max_tokens": "maxTokens", "length": "maxTokens"}.get(answer.stop_reason or "", "endTurn")
        model = self.provider.model
        return {
            "role": "assistant",
            "content": {"type": "text", "text": answer.text},
            "model": model,
            "stopReason": stop,
        }

    async def _elicit(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("mode", "form") != "form" or not self._turns:
            return {"action": "decline"}
        schema = params.get("requestedSchema")
        event = ElicitationNeeded(server, str(params.get("message", "")), schema if isinstance(schema, dict) else {})
        answer: dict[str, Any] = await self._turns[-1].ask(event)
        return answer


async def _listed_skills(name: str, client: Client) -> list[SkillEntry]:
    """The skills ``client``'s server lists (none when it does not offer the extension, or
    its listing fails: that is logged)."""
    if SKILLS_EXTENSION not in client.server_extensions:
        return []
    try:
        return await client.list_skills()
    except ClientError as exc:
        log.warning("listing the skills of %s failed: %s", name, exc)
        return []


def _sampling_message(message: dict[str, Any]) -> dict[str, Any]:
    """A ``sampling/createMessage`` message as a neutral one (:mod:`.model`)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(text_part(str(block.get("text", ""))))
        elif block.get("type") in ("image", "audio"):
            parts.append({"type": block["type"], "data": block.get("data", ""), "mime_type": block.get("mimeType", "")})
    role = "assistant" if message.get("role") == "assistant" else "user"
    return {"role": role, "content": parts or [text_part("")]}
