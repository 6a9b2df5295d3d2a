"""Tool names that may fool a person: unusual characters, mixed scripts, and look-alikes.

The specification says tool names SHOULD be 1 to 128 of ``A-Z a-z 0-9 _ . -``. A name that is
not (:func:`unusual` says why) may hide a letter of another script that looks like a Latin one
(``delete_file`` with a Cyrillic e, U+0435), or a ``/`` that makes ``seed/nuke`` read like a tool of
another server. :func:`skeleton` is what a name looks like, so that names which differ only in
look-alike characters (``delete_fiIe`` with a capital ``I``, ``de1ete_file``) have the same one:
the name in compatibility form (NFKD), without combining marks and invisible characters, each
character of a small table of Cyrillic, Greek and ASCII look-alikes replaced by the letter it
resembles, case folded. The table covers the common look-alikes of Latin letters and digits, not
every confusable character of Unicode.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

PLAIN = re.compile(r"[A-Za-z0-9_.-]{1,128}")
MAX_LENGTH = 128
#: Characters that look like a Latin letter, digit or ``-``, and the one they look like.
LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("Il1|\u01c0\u0399\u0406\u04c0\u04cf\u2160\u217c\u2223", "l"),
        **dict.fromkeys("0O\u039f\u03bf\u041e\u043e\u0585\u2134", "o"),
        **dict.fromkeys("\u0410\u0430\u0391\u03b1\u0251", "a"),
        **dict.fromkeys("\u0392\u0412\u042c", "b"),
        **dict.fromkeys("\u0421\u0441\u03f2\u1d04", "c"),
        **dict.fromkeys("\u0501", "d"),
        **dict.fromkeys("\u0415\u0435\u0395", "e"),
        **dict.fromkeys("\u0261", "g"),
        **dict.fromkeys("\u041d\u04bb\u0397", "h"),
        **dict.fromkeys("\u0456\u03b9\u0269\u0131", "i"),
        **dict.fromkeys("\u0408\u0458\u03f3", "j"),
        **dict.fromkeys("\u041a\u043a\u039a\u03ba", "k"),
        **dict.fromkeys("\u041c\u039c", "m"),
        **dict.fromkeys("\u039d", "n"),
        **dict.fromkeys("\u0420\u0440\u03a1\u03c1", "p"),
        **dict.fromkeys("\u051b", "q"),
        **dict.fromkeys("\u0405\u0455", "s"),
        **dict.fromkeys("\u0422\u03a4", "t"),
        **dict.fromkeys("\u03c5\u057d", "u"),
        **dict.fromkeys("\u03bd\u0475", "v"),
        **dict.fromkeys("\u051d", "w"),
        **dict.fromkeys("\u0425\u0445\u03a7", "x"),
        **dict.fromkeys("\u0423\u0443\u03a5", "y"),
        **dict.fromkeys("\u0396", "z"),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212\ufe63", "-"),
    }
)


def skeleton(name: str) -> str:
    """What ``name`` looks like (see the module's description): equal for look-alikes."""
    decomposed = unicodedata.normalize("NFKD", name)
    kept = "".join(char for char in decomposed if unicodedata.category(char) not in ("Mn", "Me", "Cf", "Cc"))
    return kept.translate(LOOKALIKES).casefold().translate(LOOKALIKES).replace("rn", "m")


def unusual(name: str) -> str:
    """Why ``name`` is not a plain tool name (the characters outside the specification's set,
    the scripts it mixes, its length), or ``""`` when it is one."""
    if PLAIN.fullmatch(name):
        return ""
    if not name:
        return "the name is empty"
    reasons = []
    if len(name) > MAX_LENGTH:
        reasons.append(f"{len(name)} characters long (more than {MAX_LENGTH})")
    odd = list(dict.fromkeys(char for char in name if not PLAIN.fullmatch(char)))
    if odd:
        shown = ", ".join(_character(char) for char in odd[:5]) + (f" and {len(odd) - 5} more" if len(odd) > 5 else "")
        reasons.append(f"characters outside A-Z a-z 0-9 _ . -: {shown}")
    scripts = sorted({_script(char) for char in name if char.isalpha()})
    if len(scripts) > 1:
        reasons.append(f"letters of several scripts ({', '.join(scripts)})")
    return "; ".join(reasons)


def marks(tools: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """For each ``(server, tool name)`` whose name may fool a person, why: what
    :func:`unusual` says, and the other tools (``SERVER/TOOL``) whose different names look
    the same. Plain names that look like no other are left out."""
    pairs = list(dict.fromkeys(tools))
    alike: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    for pair in pairs:
        alike[skeleton(pair[1])].append(pair)
    found = {}
    for server, name in pairs:
        others = [f"{s}/{n}" for s, n in alike[skeleton(name)] if n != name]
        reasons = [unusual(name)] + ([f"looks like {', '.join(others)}"] if others else [])
        said = "; ".join(reason for reason in reasons if reason)
        if said:
            found[(server, name)] = said
    return found


def _character(char: str) -> str:
    if " " < char < "\x7f":
        return repr(char)
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}".rstrip()


def _script(char: str) -> str:
    """The script of a letter, as the first word of its Unicode name (``LATIN``, ``CYRILLIC``)."""
    return unicodedata.name(char, "UNKNOWN").split(" ")[0]
