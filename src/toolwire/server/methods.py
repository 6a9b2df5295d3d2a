"""The standard MCP methods, as routes of the dispatch table (see :mod:`.dispatch`).

================================  ======  ===============  ==========================================
method                            eras    offered by       handler
================================  ======  ===============  ==========================================
``initialize``                    legacy                   the protocol core (the handshake)
``ping``                          legacy                   the protocol core
``logging/setLevel``              legacy                   the protocol core
``server/discover``               modern                   the protocol core
``tools/list``                    both                     :mod:`.lists`
``tools/call``                    both                     :func:`.calls.call_tool`
``resources/list``                both    ``resources``    :mod:`.lists`
``resources/templates/list``      both    ``resources``    :mod:`.lists`
``resources/read``                both    ``resources``    :mod:`.features`
``resources/subscribe``           legacy  ``resources``    :mod:`.features`
``resources/unsubscribe``         legacy  ``resources``    :mod:`.features`
``prompts/list``                  both    ``prompts``      :mod:`.lists`
``prompts/get``                   both    ``prompts``      :mod:`.features`
``completion/complete``           both    ``completions``  :mod:`.features`
``subscriptions/listen``          modern                   :mod:`.subscriptions`
================================  ======  ===============  ==========================================

Extensions add theirs when a server offers them (:mod:`.extensions`): the ``tasks/*``
methods are the tasks extension's (:mod:`toolwire.tasks.extension`).
"""

from __future__ import annotations

from .calls import call_tool
from .dispatch import LEGACY, MODERN, Dispatch
from .features import complete_argument, get_prompt, read_resource, subscribe
from .lists import list_prompts, list_resources, list_templates, list_tools
from .subscriptions import listen

#: Answered by the protocol core itself (:class:`~toolwire.protocol.connection.ServerConnection`):
#: listed for their era rules, with no handler.
CORE = None


def standard() -> Dispatch:
    """A dispatch table holding the standard methods (the table above)."""
    table = Dispatch()
    table.register("initialize", CORE, eras={LEGACY})
    table.register("ping", CORE, eras={LEGACY})
    table.register("logging/setLevel", CORE, eras={LEGACY})
    table.register("server/discover", CORE, eras={MODERN})
    table.register("tools/list", list_tools)
    table.register("tools/call", call_tool)
    table.register("resources/list", list_resources, offered_by="resources")
    table.register("resources/templates/list", list_templates, offered_by="resources")
    table.register("resources/read", read_resource, offered_by="resources")
    table.register("resources/subscribe", subscribe, eras={LEGACY}, offered_by="resources")
    table.register("resources/unsubscribe", subscribe, eras={LEGACY}, offered_by="resources")
    table.register("prompts/list", list_prompts, offered_by="prompts")
    table.register("prompts/get", get_prompt, offered_by="prompts")
    table.register("completion/complete", complete_argument, offered_by="completions")
    table.register("subscriptions/listen", listen, eras={MODERN})
    return table


#: The standard table; each server starts from a copy of it.
STANDARD = standard()
