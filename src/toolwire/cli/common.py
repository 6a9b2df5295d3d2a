"""What every command shares, here and in :mod:`toolwire.terminal`: its failures (each a
one-line ``toolwire: ...`` on stderr), its :mod:`argparse` parser whose mistakes are one such
line, the words after ``--`` kept apart, and a server file's :class:`~toolwire.Server`. It
imports nothing of :mod:`toolwire.terminal` nor of the commands."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, NoReturn


class UsageError(Exception):
    """The command line asks for something that cannot be done; the message says why and
    what to do. :func:`toolwire.cli.main` prints it as one line naming the command's help
    (:meth:`line`) and exits with status 2."""

    def line(self, command: str | None) -> str:
        """The message, ending with where to read more: ``(see toolwire COMMAND -h)``, or
        ``toolwire -h`` without a command (unless the message names that help itself)."""
        shown = f"toolwire {command} -h" if command else "toolwire -h"
        said = str(self)
        return said if shown in said else f"{said} (see {shown})"


class ServingFailed(Exception):
    """The server could not start serving; the message says why (exit status 1)."""


class ImportFailed(Exception):
    """A server file failed while it was imported: one line saying how, then the file's
    own frames of the traceback (toolwire's and importlib's left out; exit status 1)."""

    def __init__(self, path: str, error: BaseException) -> None:
        import traceback

        if isinstance(error, SyntaxError):
            where = f"SyntaxError: {error.msg} (line {error.lineno})"
            detail = "".join(traceback.format_exception_only(error)).rstrip()
        else:
            from ..tracebacks import own_frames

            where = f"{type(error).__name__}: {error}"
            detail = own_frames(error)
        super().__init__(f"could not import {path}: {where}")
        self.detail = detail


class Parser(argparse.ArgumentParser):
    """An argparse parser whose mistakes raise :class:`UsageError`, one line, instead of
    printing the usage and exiting; a mistyped option or choice gets a "did you mean"."""

    def error(self, message: str) -> NoReturn:
        unrecognized = "unrecognized arguments: "
        if message.startswith(unrecognized):
            word = message[len(unrecognized) :].split(" ")[0]
            command = self.prog.removeprefix("toolwire ")
            if not word.startswith("-"):
                raise UsageError(f"unexpected {word!r}")
            options = [option for option in self._option_string_actions if option.startswith("--")]
            message = f"unknown option for {command}: {word!r}{did_you_mean(word.partition('=')[0], options)}"
        choice = INVALID_CHOICE.fullmatch(message)
        if choice:
            offered = re.findall(r"'([^']*)'", choice["choices"])
            listed = ", ".join(offered)
            message = f"{choice['argument']}: {choice['word']!r} is not one of {listed}"
            message += did_you_mean(choice["word"], offered)
        raise UsageError(message)


#: argparse's message for a value that is not one of an argument's choices.
INVALID_CHOICE = re.compile(
    r"(?P<argument>argument \S+): invalid choice: '(?P<word>.*)' \(choose from (?P<choices>.*)\)"
)


def did_you_mean(word: str, known: list[str]) -> str:
    """``: did you mean 'X'?`` for the one of ``known`` closest to a mistyped ``word``, or
    ``""`` if none is close (options are compared without their dashes: ``--out`` is not
    ``--timeout`` mistyped)."""
    import difflib

    names = {name.lstrip("-"): name for name in known}
    close = difflib.get_close_matches(word.lstrip("-"), list(names), n=1, cutoff=0.7)
    return f": did you mean {names[close[0]]!r}?" if close else ""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, told the terminal's width: its own way imports :mod:`shutil` (3 ms of start-up)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        if width is None:
            try:
                columns = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(1).columns
            except (AttributeError, ValueError, OSError):
                columns = 80
            width = columns - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def command_parser(command: str, usage: str, description: str, epilog: str | None = None) -> Parser:
    """The parser of ``toolwire COMMAND``, its help text written as it is given."""
    return Parser(
        prog=f"toolwire {command}",
        usage=usage,
        description=description,
        epilog=epilog,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )


def split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """The words before the first ``--``, and those after it (``None`` without ``--``);
    :class:`UsageError` for a ``--`` with nothing after it."""
    if "--" not in argv:
        return argv, None
    split = argv.index("--")
    if split == len(argv) - 1:
        raise UsageError("a command line is needed after --")
    return argv[:split], argv[split + 1 :]


def one_target(command: str, word: str | None, server_command: list[str] | None) -> str | list[str]:
    """The TARGET word or the command line after ``--``; :class:`UsageError` for none or both."""
    if word is None:
        if server_command is None:
            raise UsageError(f"{command} needs a TARGET: FILE.py[:OBJECT], a URL, or a command line after --")
        return server_command
    if server_command is not None:
        raise UsageError(f"unexpected {word!r}: {command} takes one TARGET, or a command line after --")
    return word


def load_server(target: str) -> Any:
    """The :class:`~toolwire.Server` named by ``FILE[:OBJECT]``; :class:`UsageError` if none,
    :class:`ImportFailed` if the file fails, :class:`~toolwire.extras.ExtraMissing` as the
    file raised it (it needs an extra)."""
    import importlib.util

    from ..server.folder import servers_of
    from ..server.server import Server

    path, _, name = target.partition(":")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_name = "__toolwire_target__"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    from ..extras import ExtraMissing

    try:
        spec.loader.exec_module(module)
    except ExtraMissing:
        raise  # the file says which extra it needs: that line is the whole story
    except (Exception, SystemExit) as exc:
        raise ImportFailed(path, exc) from None
    if name:
        if not hasattr(module, name):
            raise UsageError(f"{path} has no object named {name!r}")
        found = getattr(module, name)
    else:
        candidates = servers_of(module)
        if len(candidates) != 1:
            what = "no Server" if not candidates else "several Servers"
            raise UsageError(f"{path} defines {what}: name the one to serve as {path}:OBJECT")
        found = candidates[0]
    if callable(found) and not isinstance(found, Server):
        found = found()
    if not isinstance(found, Server):
        raise UsageError(f"{target} is a {type(found).__name__}, not a toolwire Server")
    return found
