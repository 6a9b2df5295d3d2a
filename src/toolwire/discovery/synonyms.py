"""Words that mean much the same in requests to software: a small thesaurus of everyday
office and computing English, so that a request for a "folder" finds a tool that lists a
"directory".

Each group is a set of words used interchangeably for one action or one thing (``delete
remove erase``, ``meeting appointment event``). It is general vocabulary, written for tool
search at large, not for one set of tools or requests: no product names, no word that is
related to another only in some domain. A word may stand in several groups (``bill`` is an
invoice and a charge); its related words are those of all of them. Words are compared by
their stems (:func:`.tokens.words`), so one form of each word is enough, except for
irregular forms (``wrote``, ``written``).
"""

from __future__ import annotations

import functools

from .tokens import words

GROUPS = (
    # Actions on things.
    "create make add new generate",
    "delete remove erase discard destroy purge",
    "update change modify edit alter amend",
    "move relocate transfer",
    "copy duplicate clone",
    "rename retitle",
    "read view show display see",
    "list enumerate browse",
    "search find look lookup locate seek query",
    "save store keep write",
    "send deliver dispatch",
    "reply respond answer",
    "download fetch retrieve",
    "upload push publish",
    "start launch begin run",
    "stop halt terminate kill end",
    "restart reboot relaunch",
    "cancel abort revoke",
    "schedule book arrange plan reserve",
    "accept approve confirm",
    "decline reject refuse",
    "assign give allocate delegate",
    "share grant",
    "comment note remark",
    "link connect relate associate",
    "refund reimburse repay",
    "pay payment charge",
    "convert conversion exchange",
    "count number tally",
    "describe describes description explain",
    "notify notification alert remind reminder",
    "archive backup",
    "restore recover",
    "check verify inspect",
    "close shut",
    "summarize summary overview",
    "modified changed edited",
    # Things.
    "folder directory dir",
    "file document",
    "email mail e-mail",
    "inbox mailbox",
    "message note",
    "meeting appointment event",
    "calendar agenda schedule diary",
    "invitation invite",
    "channel room",
    "chat conversation",
    "status state",
    "ticket issue bug task",
    "bug defect error fault crash",
    "repository repo",
    "commit revision",
    "log logs history",
    "author writer wrote written",
    "size big large small bytes",
    "date day",
    "time hour",
    "container docker",
    "image picture photo",
    "database db",
    "table tables",
    "query sql",
    "row record entry",
    "backup dump snapshot",
    "customer client buyer",
    "subscription plan membership",
    "money funds cash",
    "dollar euro currency",
    "invoice bill",
    "price cost rate",
    "account balance",
    "address location place",
    "directions route way navigate",
    "near nearby close around",
    "distance far",
    "coordinates latitude longitude position",
    "weather conditions",
    "forecast outlook prediction",
    "temperature hot cold warm degrees",
    "rain precipitation shower",
    "storm warning alert severe",
    "pollution polluted smog",
    "timezone zone",
    "traffic congestion",
    "user person people member",
    "team group",
    "password credential secret",
    "setting config configuration preference option",
    "error failure problem",
    "report summary",
)


def related(word: str) -> frozenset[str]:
    """The stems of the words that share a group with ``word`` (a stem, as
    :func:`.tokens.words` gives it), without ``word`` itself; empty when it is in no group."""
    return _thesaurus().get(word, frozenset())


@functools.cache
def _thesaurus() -> dict[str, frozenset[str]]:
    """Each stem of :data:`GROUPS` and the stems it shares a group with (built once)."""
    found: dict[str, set[str]] = {}
    for group in GROUPS:
        stems = set(words(group))
        for stem in stems:
            found.setdefault(stem, set()).update(stems - {stem})
    return {stem: frozenset(others) for stem, others in found.items()}
