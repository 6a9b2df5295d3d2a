"""Search over tools: which of many tools fit a request, ranked with BM25 (the ``search``
extra: ``pip install 'toolwire[search]'``).

    from toolwire.discovery import search_tools

    tools = await client.list_tools()
    for match in search_tools(tools, "send an email to the team", limit=3):
        print(match.name, match.score)

:mod:`.tokens` says how text becomes words (snake_case, camelCase, English stems, CJK
characters and pairs), :mod:`.synonyms` which words a request's words also look for
(``folder``: ``directory``), :mod:`.index` what a tool is found by and how it is ranked. The
host's deferred loading (:class:`toolwire.host.ToolDeferral`) and ``toolwire search`` use
:class:`ToolIndex`.
"""

from .index import MAX_QUERY_CHARS, ToolIndex, ToolMatch, document, search_tools
from .tokens import words

__all__ = ["MAX_QUERY_CHARS", "ToolIndex", "ToolMatch", "document", "search_tools", "words"]
