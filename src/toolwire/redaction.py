"""Redaction of secrets wherever toolwire logs or audits.

:func:`redact` walks a JSON-like value and replaces what looks secret with ``"[REDACTED]"``:

- the string value of any field whose name says it is one: a word of the name (split at
  ``_``, ``-``, ``.`` and case changes) is ``password``, ``token``, ``secret``, ``key``,
  ``apikey``, ``auth``, ``authorization``, ``cookie``, ``credential``, ``private``,
  ``session``... (``api_key``, ``accessToken``, ``X-Api-Key``; not ``keyboard``, and not a
  number such as ``max_tokens``);
- in strings: what follows ``password``, ``secret``, ``token`` or ``api key`` after ``:``
  or ``=`` (``password: hunter``, ``token=abc1``), or after a space when it has a digit
  (``with password hunter2``), bearer and basic credentials
  (``Bearer abc...``), the key formats of common
  services (OpenAI/Anthropic/DeepSeek ``sk-...``, GitHub ``ghp_``/``github_pat_``, GitLab
  ``glpat-``, Slack ``xox?-``, AWS ``AKIA...``, Google ``AIza...``, Stripe ``sk_live_``/``rk_``,
  JWTs), URLs' passwords (``https://user:pw@host``), and long high-entropy runs (32+
  characters of letters, digits and ``+/_-=`` with at least 3.5 bits of entropy each), but
  not within an absolute path unless a name in it holds one (``/home/ci1/src/app``, and a
  temporary folder's random name: ``/tmp/check.Xq3ZpT7bKc/unpacked/toolwire/server.py``).

:class:`RedactingFilter` applies :func:`redact_text` to log records (their message and
traceback); ``toolwire run`` installs it on its stderr handler.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from typing import Any

REDACTED = "[REDACTED]"

#: Words that make a field's name secret (the name is split at ``_``, ``-``, ``.`` and case changes).
SECRET_WORDS = frozenset(
    {
        "password", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "apikey", "key", "privatekey",
        "authorization", "auth", "cookie", "credential", "credentials", "private", "signature", "otp", "pin",
        "sessionid", "session",
    }
)  # fmt: skip
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PATTERNS = [
    re.compile(r"(?i)(?P<keep>\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(?P<keep>\b(?:password|passwd|passphrase|secret|token|api[-_ ]?key)\s*[:=]\s*)[^\s,;'\"]{4,}"),
    re.compile(
        r"(?i)(?P<keep>\b(?:password|passwd|passphrase|secret|token|api[-_ ]?key)\s+(?:is\s+)?)"
        r"(?=[^\s,;'\"]{4,})[^\s,;'\"]*[0-9][^\s,;'\"]*"
    ),
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
]
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
#: An absolute path: a ``/`` that starts the text, a word or a quoted string, and what follows up to a space or quote.
_ABSOLUTE_PATH = re.compile(r"(?:^|(?<=[\s\"'=(\[,]))/[^\s\"'`,;()\[\]<>]+")


def redact(value: Any, depth: int = 0) -> Any:
    """``value`` with secrets replaced (see the module's description); never raises."""
    if isinstance(value, str):
        return redact_text(value)
    if depth > 32:
        return value
    if isinstance(value, dict):
        return {
            key: REDACTED if isinstance(item, str) and secret_name(key) else redact(item, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, depth + 1) for item in value]
    return value


def secret_name(name: Any) -> bool:
    """Whether a field called ``name`` holds a secret."""
    if not isinstance(name, str):
        return False
    words = [word.lower() for word in _WORD.findall(name)]
    joined = "".join(words)
    return any(word in SECRET_WORDS for word in words) or joined in SECRET_WORDS


def redact_text(text: str) -> str:
    """``text`` with secret-looking strings replaced."""
    for pattern in _PATTERNS:
        text = pattern.sub(_replacement, text)
    paths = [found.span() for found in _ABSOLUTE_PATH.finditer(text)]

    def if_random(match: re.Match[str]) -> str:
        (start, end), run = match.span(), match.group()
        in_a_path = any(first <= start and end <= last for first, last in paths)
        if in_a_path and all(len(name) < 32 for name in run.split("/")):
            return run  # a traceback's file, say: names, none long enough to be a key
        return _if_random(run)

    return _CANDIDATE.sub(if_random, text)


def _replacement(match: re.Match[str]) -> str:
    keep = match.groupdict().get("keep")
    return f"{keep}{REDACTED}" if keep else REDACTED


def _if_random(run: str) -> str:
    if REDACTED.strip("[]") in run:
        return run
    kinds = sum(any(test(c) for c in run) for test in (str.islower, str.isupper, str.isdigit))
    return REDACTED if kinds >= 2 and entropy(run) >= 3.5 else run


def entropy(text: str) -> float:
    """Shannon entropy of ``text``, in bits per character."""
    counts = Counter(text)
    total = len(text)
    return -sum(count / total * math.log2(count / total) for count in counts.values())


class RedactingFilter(logging.Filter):
    """Redacts each record's message and traceback; add it to a handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its message: leave it be
            return True
        record.msg, record.args = redact_text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True
