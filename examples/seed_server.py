"""The seed example server: every tool from toolwire's design documents, in one file.

Run it as desktop MCP clients do (over stdio):

    toolwire run examples/seed_server.py

It is meant to be read. Each tool shows one part of the API:

- ``get_weather`` / ``get_weather_data``: a real HTTP API from a sync tool (run on a worker
  thread), plain text versus structured output, failures reported with ``ToolError``.
- ``calculate_sum`` / ``calculator``: annotations, ``Literal`` parameters, execution errors.
- ``text_analyzer``: a dataclass result becomes ``outputSchema`` + ``structuredContent``.
- ``search_codebase``, ``get_file_content``, ``analyze_csv``, ``delete_file``: file tools
  confined to one directory by a single helper, :func:`resolve_in_root`, and bounded in the
  work and memory a caller can make them spend: a linear-time regular expression engine
  (RE2, ``pip install google-re2``), files read as streams, every output capped. Their
  errors name paths relative to the workspace, never where the server keeps it.
- ``create_record``: writing to SQLite without letting the model inject SQL.
- ``process_large_file``: progress notifications through the :class:`~toolwire.Context`.

Configuration, read when a tool runs (not at import), from the environment:

=========================  ==================================================================
``TOOLWIRE_EXAMPLES_ROOT``  the directory the file tools may touch (default: your own copy of
                            ``sample_data``, made on first use in your data folder:
                            ``$XDG_DATA_HOME/toolwire/seed-workspace``, by default
                            ``~/.local/share/toolwire/seed-workspace``; on Windows under
                            ``%LOCALAPPDATA%``), so that ``delete_file`` and ``create_record``
                            never change the files next to this one
``TOOLWIRE_EXAMPLES_DB``    the SQLite database of ``create_record`` (default:
                            ``records.sqlite3`` in the root)
``TOOLWIRE_WEATHER_URL``    base URL of the Open-Meteo forecast API
``TOOLWIRE_GEOCODING_URL``  base URL of the Open-Meteo geocoding API
=========================  ==================================================================
"""

import contextlib
import csv
import http.client
import json
import math
import os
import re
import shutil
import sqlite3
import stat
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from toolwire import Context, Param, Server, ToolError, ToolResult

server = Server(
    "seed-examples",
    "1.0.0",
    instructions=(
        "Example tools: weather lookups, arithmetic, text statistics, and tools that read, "
        "search and change files in one workspace directory (paths are relative to it)."
    ),
)

HERE = Path(__file__).resolve().parent


# =========================================================================================
# Weather: a real HTTP API (Open-Meteo), standard library only
# =========================================================================================

HTTP_TIMEOUT_SECONDS = 5.0

#: WMO weather interpretation codes, as Open-Meteo reports them.
WMO_CODES = {
    0: "Clear sky",
    1: "Mainly clear",
    2: "Partly cloudy",
    3: "Overcast",
    45: "Fog",
    48: "Depositing rime fog",
    51: "Light drizzle",
    53: "Moderate drizzle",
    55: "Dense drizzle",
    56: "Light freezing drizzle",
    57: "Dense freezing drizzle",
    61: "Slight rain",
    63: "Moderate rain",
    65: "Heavy rain",
    66: "Light freezing rain",
    67: "Heavy freezing rain",
    71: "Slight snowfall",
    73: "Moderate snowfall",
    75: "Heavy snowfall",
    77: "Snow grains",
    80: "Slight rain showers",
    81: "Moderate rain showers",
    82: "Violent rain showers",
    85: "Slight snow showers",
    86: "Heavy snow showers",
    95: "Thunderstorm",
    96: "Thunderstorm with slight hail",
    99: "Thunderstorm with heavy hail",
}


@dataclass
class WeatherData:
    """Current weather conditions."""

    temperature: Annotated[float, "Temperature in Celsius"]
    conditions: Annotated[str, "Weather conditions description"]
    humidity: Annotated[float, "Humidity percentage"]


def _no_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's json module would accept NaN and Infinity


def _get_json(base_url: str, path: str, query: dict[str, Any]) -> Any:
    """GET ``base_url + path?query`` and decode the JSON answer; ``ToolError`` if anything fails."""
    url = f"{base_url.rstrip('/')}{path}?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "toolwire-example"})
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:  # before URLError: it is a subclass
        raise ToolError(f"Failed to fetch weather data: the weather service answered HTTP {exc.code}") from None
    except urllib.error.URLError as exc:
        raise ToolError(f"Failed to fetch weather data: {exc.reason}") from None
    except (OSError, http.client.HTTPException) as exc:  # timeouts, connections reset, garbled HTTP
        raise ToolError(f"Failed to fetch weather data: {str(exc) or type(exc).__name__}") from None
    try:
        return json.loads(body, parse_constant=_no_json_constant)
    except ValueError:
        raise ToolError("Failed to fetch weather data: the weather service sent invalid JSON") from None


def fetch_weather(location: str) -> tuple[str, WeatherData]:
    """The place's name as the geocoder spells it, and its current weather."""
    geocoding_url = os.environ.get("TOOLWIRE_GEOCODING_URL") or "https://geocoding-api.open-meteo.com"
    weather_url = os.environ.get("TOOLWIRE_WEATHER_URL") or "https://api.open-meteo.com"
    found = _get_json(geocoding_url, "/v1/search", {"name": location, "count": 1})
    results = found.get("results") if isinstance(found, dict) else None
    if not results:
        raise ToolError(f"Weather lookup failed: location not found: {location}")
    try:
        place = results[0]
        latitude, longitude = float(place["latitude"]), float(place["longitude"])
        name = str(place.get("name") or location)
        forecast = _get_json(
            weather_url,
            "/v1/forecast",
            {
                "latitude": latitude,
                "longitude": longitude,
                "current": "temperature_2m,relative_humidity_2m,weather_code",
            },
        )
        current = forecast["current"]
        weather = WeatherData(
            temperature=float(current["temperature_2m"]),
            conditions=WMO_CODES.get(int(current["weather_code"]), f"Unknown (WMO code {current['weather_code']})"),
            humidity=float(current["relative_humidity_2m"]),
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ToolError(f"Failed to fetch weather data: unexpected answer from the weather service ({exc!r})") from None
    return name, weather


@server.tool(title="Weather Information Provider", read_only=True, open_world=True)
def get_weather(location: str) -> str:
    """Get current weather information for a location.

    Args:
        location: City name or zip code
    """
    name, weather = fetch_weather(location)
    return f"Current weather in {name}: Temperature: {weather.temperature:g}°C, Conditions: {weather.conditions}"


@server.tool(title="Weather Data", read_only=True, open_world=True)
def get_weather_data(location: str) -> WeatherData:
    """Get current weather data for a location, as structured data.

    Args:
        location: City name or zip code
    """
    return fetch_weather(location)[1]


# =========================================================================================
# Arithmetic and text
# =========================================================================================


def _finite(value: float) -> float:
    """JSON has no infinity or NaN: say so instead of sending something invalid."""
    if not math.isfinite(value):
        raise ToolError(f"The result is not a finite number ({value}); use smaller operands")
    return value


@server.tool(title="Calculate Sum", read_only=True, open_world=False)
def calculate_sum(a: float, b: float) -> float:
    """Add two numbers together.

    Args:
        a: First number
        b: Second number
    """
    return _finite(a + b)


@server.tool(title="Calculator", read_only=True, idempotent=True, open_world=False)
def calculator(operation: Literal["add", "subtract", "multiply", "divide"], a: float, b: float) -> float:
    """Perform basic arithmetic on two numbers.

    Args:
        operation: The operation to perform
        a: First operand
        b: Second operand
    """
    if operation == "add":
        return _finite(a + b)
    if operation == "subtract":
        return _finite(a - b)
    if operation == "multiply":
        return _finite(a * b)
    if b == 0:
        raise ToolError("Cannot divide by zero")
    return _finite(a / b)


@dataclass
class TextStats:
    """Counts for a piece of text."""

    characters: Annotated[int, "Number of characters, spaces included"]
    words: Annotated[int, "Number of whitespace-separated words"]
    lines: Annotated[int, "Number of lines"]


@server.tool(title="Text Analyzer", read_only=True, idempotent=True, open_world=False)
def text_analyzer(text: str) -> TextStats:
    """Count the characters, words and lines of a text.

    Args:
        text: The text to analyze
    """
    return TextStats(characters=len(text), words=len(text.split()), lines=len(text.splitlines()))


# =========================================================================================
# Files: every path goes through resolve_in_root
# =========================================================================================


def workspace_root() -> Path:
    """The directory the file tools work in, fully resolved: ``TOOLWIRE_EXAMPLES_ROOT``, or
    else the user's own copy of the samples (:func:`user_workspace`)."""
    given = os.environ.get("TOOLWIRE_EXAMPLES_ROOT")
    root = Path(given).resolve() if given else user_workspace()
    if not root.is_dir():
        raise ToolError("The workspace root is not a directory: check TOOLWIRE_EXAMPLES_ROOT")
    return root


def user_workspace() -> Path:
    """``toolwire/seed-workspace`` in the user's data folder (``$XDG_DATA_HOME``, else
    ``%LOCALAPPDATA%`` or ``~/.local/share``), made on first use as a copy of ``sample_data``:
    the tools change that copy, never the files of the repository. ``ToolError`` (naming no
    path) if it cannot be made."""
    try:
        base = os.environ.get("XDG_DATA_HOME") or os.environ.get("LOCALAPPDATA") or Path.home() / ".local" / "share"
        root = (Path(base) / "toolwire" / "seed-workspace").resolve()
        if not root.is_dir():
            root.parent.mkdir(parents=True, exist_ok=True)
            fresh = tempfile.mkdtemp(prefix=".seed-workspace-", dir=root.parent)
            ignored = shutil.ignore_patterns("__pycache__", "*.pyc", "records.sqlite3")
            shutil.copytree(HERE / "sample_data", fresh, ignore=ignored, dirs_exist_ok=True)
            try:
                os.rename(fresh, root)  # whole at once: a server starting meanwhile never sees half a copy
            except OSError:  # another server made it first
                shutil.rmtree(fresh, ignore_errors=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home directory
        said = getattr(exc, "strerror", None) or type(exc).__name__
        raise ToolError(f"The workspace could not be made ({said}): set TOOLWIRE_EXAMPLES_ROOT to a folder") from None
    return root


def resolve_in_root(path: str) -> Path:
    """The real location of ``path`` (relative to the workspace root), if it is inside the root.

    Refused with ``ToolError``: absolute paths, ``..`` that climbs out of the root, and
    symbolic links that lead out of it. The returned path has every link resolved, so what
    the tool then opens is exactly what was checked.
    """
    root = workspace_root()
    if "\0" in path:
        raise ToolError("Invalid path: it contains a NUL character")
    if Path(path).anchor:  # "/etc/passwd", and on Windows "C:\\x" or "\\\\server\\share"
        raise ToolError(f"Access denied: absolute paths are not allowed, use a path relative to the workspace: {path}")
    if not Path(os.path.normpath(root / path)).is_relative_to(root):
        raise ToolError(f"Access denied: the path escapes the workspace root: {path}")
    try:
        resolved = (root / path).resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links; its message names the absolute path
        raise ToolError(f"Cannot resolve {path}: it leads into a loop of symbolic links") from None
    if not resolved.is_relative_to(root):
        raise ToolError(f"Access denied: the path leads outside the workspace root through a symbolic link: {path}")
    return resolved


def _existing_file(path: str) -> Path:
    """``resolve_in_root(path)``, which must be a regular file."""
    resolved = resolve_in_root(path)
    try:
        mode = resolved.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"File not found: {path}") from None
    except OSError as exc:  # a name too long, a file it cannot look at...
        raise _os_error(path, "open", exc) from None
    if stat.S_ISDIR(mode):
        raise ToolError(f"{path} is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise ToolError(f"File not found: {path}")
    return resolved


def _os_error(path: str, action: str, exc: OSError) -> ToolError:
    """A ``ToolError`` for a failed file operation, naming the path as the caller gave it
    (an ``OSError``'s own message names the absolute path on the server)."""
    return ToolError(f"Cannot {action} {path}: {exc.strerror or type(exc).__name__}")


FileType = Literal[".ts", ".py", ".js", ".md", ".rs", ".go"]

#: Directories search_codebase never looks into.
SKIPPED_DIRECTORIES = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache"}
MAX_SEARCHED_FILE_BYTES = 4 * 1024 * 1024
#: What one search may read in all: past it, the search stops and says so.
MAX_SEARCHED_BYTES = 64 * 1024 * 1024
MAX_SEARCHED_FILES = 20_000
#: Matching lines are shown up to this many characters.
MAX_MATCH_CHARS = 500


@dataclass
class Match:
    """One matching line."""

    path: Annotated[str, "File path, relative to the workspace root"]
    line: Annotated[int, "Line number, from 1"]
    text: Annotated[str, "The matching line"]


@dataclass
class SearchResults:
    """What search_codebase found."""

    matches: list[Match]
    truncated: Annotated[bool, "Whether more matches exist than maxResults"]


def _workspace_lines(suffix: str | None, budget: list[int]) -> Iterator[tuple[str, int, str]]:
    """``(path, line number, line)`` for every line of the workspace's text files, in a stable
    order. Files behind links that leave the workspace, binary files and huge files are
    skipped. ``budget`` is ``[files, bytes]`` left to read: the walk stops when either runs out."""
    root = workspace_root()
    for directory, subdirectories, files in os.walk(root):  # does not follow directory links
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES)
        for name in sorted(files):
            if suffix is not None and not name.endswith(suffix):
                continue
            file = Path(directory, name)
            try:
                resolved = file.resolve()
            except (OSError, RuntimeError):  # a loop of symbolic links
                continue
            if not resolved.is_relative_to(root) or not resolved.is_file():
                continue  # a link out of the workspace, a dangling link, a pipe...
            try:
                size = resolved.stat().st_size
                if size > MAX_SEARCHED_FILE_BYTES:
                    continue
                if budget[0] <= 0 or budget[1] < size:
                    budget[0] = 0
                    return
                data = resolved.read_bytes()
            except OSError:  # deleted meanwhile, unreadable
                continue
            budget[0] -= 1
            budget[1] -= len(data)
            if b"\0" in data[:8192]:
                continue  # binary
            path = file.relative_to(root).as_posix()
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
                yield path, number, line


def _compile(pattern: str, case_sensitive: bool) -> Any:
    """``pattern`` compiled by RE2, whose matching takes time linear in the text (Python's
    ``re`` backtracks: ``(a+)+$`` can take longer than the age of the universe)."""
    import re2  # google-re2

    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolError(
            f"Invalid regular expression {pattern!r}: {reason}. The search engine (RE2) runs in linear time: "
            "backreferences (\\1) and lookaround ((?=...), (?<=...)) are not available"
        ) from None


# search_codebase answers with "path:line: text" lines for the model to read, plus the same
# matches as structuredContent; so it returns a ToolResult and declares its output schema.
@server.tool(title="Search Codebase", read_only=True, open_world=False, output_schema=SearchResults)
def search_codebase(
    pattern: Annotated[str, Param(min_length=1)],
    fileType: FileType | None = None,
    caseSensitive: bool = False,
    maxResults: Annotated[int, Param(ge=1, le=100)] = 20,
) -> ToolResult:
    """Search the codebase for a pattern, with regex and file-type filtering.

    Returns one "path:line: text" line per match, and the same matches as structured data.
    A search reads at most 20,000 files and 64 MiB (files over 4 MiB are skipped) and shows
    matching lines up to 500 characters.

    Args:
        pattern: Regular expression to search for (RE2 syntax, as Python's without backreferences or lookaround)
        fileType: Only search files with this extension
        caseSensitive: Whether the search is case-sensitive
        maxResults: Maximum number of matches to return
    """
    regex = _compile(pattern, caseSensitive)
    matches: list[Match] = []
    truncated = False
    budget = [MAX_SEARCHED_FILES, MAX_SEARCHED_BYTES]
    for path, number, line in _workspace_lines(fileType, budget):
        if regex.search(line):
            if len(matches) == maxResults:
                truncated = True
                break
            text = line.strip()
            if len(text) > MAX_MATCH_CHARS:
                text = text[:MAX_MATCH_CHARS] + f"... ({len(text)} characters)"
            matches.append(Match(path, number, text))
    lines = [f"{m.path}:{m.line}: {m.text}" for m in matches] or [f"No matches for {pattern!r}"]
    if truncated:
        lines.append(f"(showing the first {maxResults} matches; there are more)")
    if budget[0] <= 0:
        truncated = True
        lines.append("(the search stopped after reading its limit of files or bytes: narrow it with fileType)")
    return ToolResult("\n".join(lines), structured=SearchResults(matches, truncated))


MAX_WHOLE_FILE_BYTES = 1024 * 1024
#: The most text get_file_content returns, whole file or range (in characters).
MAX_RETURNED_CHARS = 1024 * 1024
READ_PIECE = 64 * 1024


@server.tool(title="Get File Content", read_only=True, open_world=False)
def get_file_content(
    path: str,
    startLine: Annotated[int, Param(ge=1)] | None = None,
    endLine: Annotated[int, Param(ge=1)] | None = None,
) -> str:
    """Read a text file from the workspace, whole or a range of lines.

    A whole file may be at most 1 MiB; any range returns at most 1 MiB of text, and says
    where it was cut and how to read on.

    Args:
        path: File path, relative to the workspace root
        startLine: First line to return (from 1; default: the first line)
        endLine: Last line to return, inclusive (default: the last line)
    """
    file = _existing_file(path)
    if startLine is not None and endLine is not None and startLine > endLine:
        raise ToolError(f"Invalid line range: startLine ({startLine}) is after endLine ({endLine})")
    try:
        if startLine is None and endLine is None and file.stat().st_size > MAX_WHOLE_FILE_BYTES:
            raise ToolError(
                f"{path} is larger than {MAX_WHOLE_FILE_BYTES} bytes: ask for a range with startLine/endLine"
            )
        first, last = startLine or 1, endLine or math.inf
        selected: list[str] = []
        size = count = number = 0  # characters kept, lines read, the line being read
        note = ""
        with file.open(encoding="utf-8", newline="") as stream:
            while piece := stream.readline(READ_PIECE):  # pieces: a huge line is never held whole
                number = count + 1
                if piece.endswith("\n"):
                    count += 1
                if first <= number <= last:
                    if size + len(piece) > MAX_RETURNED_CHARS:
                        kept = piece[: MAX_RETURNED_CHARS - size]
                        cut_short = bool(kept) or bool(selected and not selected[-1].endswith("\n"))
                        selected.append(kept)
                        short = f"; line {number} was cut short" if cut_short else ""
                        note = (
                            f"\n[cut: at most {MAX_RETURNED_CHARS} characters are returned{short}; "
                            f"read on with startLine={number + 1 if cut_short else number}]"
                        )
                        break
                    selected.append(piece)
                    size += len(piece)
                if count >= last:
                    break
            count = max(count, number)  # a last line without a newline still counts
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not a UTF-8 text file") from None
    except OSError as exc:
        raise _os_error(path, "read", exc) from None
    if note:
        selected.append(note)
    elif first > 1 and first > count:
        raise ToolError(f"Invalid line range: startLine ({startLine}) is past the end of {path} ({count} lines)")
    return "".join(selected)


Operation = Literal["sum", "average", "count"]


class ColumnStats(TypedDict, total=False):
    """The requested statistics of one numeric column (empty cells are left out)."""

    sum: float
    average: float
    count: int


@dataclass
class CsvAnalysis:
    """Statistics of the numeric columns of a CSV file."""

    filepath: Annotated[str, "The file analyzed, relative to the workspace root"]
    rows: Annotated[int, "Number of data rows (the header excluded)"]
    columns: Annotated[dict[str, ColumnStats], "Statistics per numeric column"]
    skipped_columns: Annotated[list[str], "Columns left out because they are not numeric"]


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class _Sum:
    """An exact running sum (Shewchuk's algorithm, as ``math.fsum``) in a few floats of memory."""

    __slots__ = ("count", "partials")

    def __init__(self) -> None:
        self.partials: list[float] = []
        self.count = 0

    def add(self, x: float) -> None:
        self.count += 1
        kept = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self.partials[kept] = low
                kept += 1
            x = high
        self.partials[kept:] = [x]

    @property
    def total(self) -> float:
        return math.fsum(self.partials)


MAX_CSV_BYTES = 512 * 1024 * 1024
MAX_CSV_COLUMNS = 1000


@server.tool(title="Analyze CSV", read_only=True, idempotent=True, open_world=False)
def analyze_csv(
    filepath: str,
    operations: Annotated[list[Operation], Param(min_items=1)],
) -> CsvAnalysis:
    """Compute statistics for each numeric column of a CSV file with a header row.

    A column is numeric when every non-empty cell in it is a number. The file is read as a
    stream (its size does not matter to memory), up to 512 MiB and 1,000 columns.

    Args:
        filepath: CSV file path, relative to the workspace root
        operations: The statistics to compute for each numeric column
    """
    file = _existing_file(filepath)
    try:
        if file.stat().st_size > MAX_CSV_BYTES:
            raise ToolError(f"{filepath} is larger than {MAX_CSV_BYTES} bytes: analyze a smaller file")
        with file.open(encoding="utf-8", newline="") as stream:
            reader = csv.reader(stream)
            header = next(reader, None)
            if not header:
                raise ToolError(f"{filepath} is empty: a header row is needed")
            if len(header) > MAX_CSV_COLUMNS:
                raise ToolError(f"{filepath} has {len(header)} columns; at most {MAX_CSV_COLUMNS} can be analyzed")
            sums = [_Sum() for _ in header]
            numeric = [True] * len(header)
            rows = 0
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue  # blank line
                rows += 1
                for index, cell in enumerate(row[: len(header)]):
                    if not cell.strip() or not numeric[index]:
                        continue
                    number = _number(cell)
                    if number is None:
                        numeric[index] = False
                        sums[index] = _Sum()  # its numbers so far are of no use now
                    else:
                        sums[index].add(number)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ToolError(f"Cannot read {filepath} as CSV: {exc}") from None
    except OSError as exc:
        raise _os_error(filepath, "read", exc) from None
    columns: dict[str, ColumnStats] = {}
    skipped: list[str] = []
    for name, is_numeric, column in zip(header, numeric, sums, strict=True):
        if not is_numeric or not column.count:
            skipped.append(name)
            continue
        stats: ColumnStats = {}
        if "sum" in operations:
            stats["sum"] = column.total
        if "average" in operations:
            stats["average"] = column.total / column.count
        if "count" in operations:
            stats["count"] = column.count
        columns[name] = stats
    return CsvAnalysis(filepath=filepath, rows=rows, columns=columns, skipped_columns=skipped)


@server.tool(title="Delete File", read_only=False, destructive=True, idempotent=True, open_world=False)
def delete_file(path: str) -> str:
    """Delete a file from the workspace. Deleting a file that does not exist changes nothing.

    Args:
        path: File path, relative to the workspace root
    """
    resolved = resolve_in_root(path)  # every check, including where a symbolic link leads
    # Delete the entry that was named: a link itself, not the file it points to.
    entry = resolve_in_root(os.path.dirname(path) or ".") / os.path.basename(path)
    try:
        if entry.is_symlink():
            entry.unlink()
            return f"Deleted the symbolic link {path}"
        if resolved.is_dir():
            raise ToolError(f"{path} is a directory: only files can be deleted")
        if not resolved.exists():
            return f"{path} does not exist: nothing to delete"
        resolved.unlink()
    except OSError as exc:
        raise _os_error(path, "delete", exc) from None
    return f"Deleted {path}"


# =========================================================================================
# Database: SQLite, with identifiers checked before they reach SQL
# =========================================================================================

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def _identifier(name: str, what: str) -> str:
    """``name`` quoted for SQL, if it is a plain identifier; ``ToolError`` if not."""
    if not IDENTIFIER.fullmatch(name) or name.lower().startswith("sqlite_"):
        raise ToolError(
            f"Invalid {what} name {name!r}: use letters, digits and underscores, starting with a letter or underscore"
        )
    return f'"{name}"'


def _sql_value(value: Any) -> Any:
    """SQLite stores numbers, text and NULL; nested JSON values are stored as JSON text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return value


@dataclass
class RecordCreated:
    """The record create_record inserted."""

    table: Annotated[str, "The table the record was inserted into"]
    id: Annotated[int, "The new record's id"]


@server.tool(title="Create Database Record", read_only=False, destructive=False, idempotent=False, open_world=False)
def create_record(table: str, data: dict[str, Any]) -> RecordCreated:
    """Insert a record into a database table, creating the table or its columns as needed.

    Args:
        table: Table name (letters, digits and underscores)
        data: Record data: column names to values
    """
    quoted_table = _identifier(table, "table")
    columns = {key: _identifier(key, "column") for key in data}
    if any(key.lower() == "id" for key in data):
        raise ToolError("The id column is assigned by the database: leave it out of data")
    database = os.environ.get("TOOLWIRE_EXAMPLES_DB") or str(workspace_root() / "records.sqlite3")
    try:
        with contextlib.closing(sqlite3.connect(database, timeout=10, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")  # take the write lock before reading the table's shape
            try:
                db.execute(f"CREATE TABLE IF NOT EXISTS {quoted_table} (id INTEGER PRIMARY KEY AUTOINCREMENT)")
                existing = {row[1].lower() for row in db.execute(f"PRAGMA table_info({quoted_table})")}
                for key, column in columns.items():
                    if key.lower() not in existing:  # SQLite names are case-insensitive
                        db.execute(f"ALTER TABLE {quoted_table} ADD COLUMN {column}")
                if data:
                    names, marks = ", ".join(columns.values()), ", ".join("?" * len(data))
                    values = [_sql_value(value) for value in data.values()]
                    cursor = db.execute(f"INSERT INTO {quoted_table} ({names}) VALUES ({marks})", values)
                else:
                    cursor = db.execute(f"INSERT INTO {quoted_table} DEFAULT VALUES")
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
    except (sqlite3.Error, OverflowError) as exc:
        raise ToolError(f"Database error: {exc}") from None
    return RecordCreated(table=table, id=int(cursor.lastrowid or 0))


# =========================================================================================
# Progress: a long job that tells the client how far it got
# =========================================================================================

CHUNK_BYTES = 64 * 1024


@dataclass
class FileSummary:
    """What process_large_file found."""

    path: Annotated[str, "The file processed, relative to the workspace root"]
    bytes: Annotated[int, "Size of the file in bytes"]
    lines: Annotated[int, "Number of lines"]
    chunks: Annotated[int, "Number of chunks read"]


@server.tool(title="Process Large File", read_only=True, idempotent=True, open_world=False)
def process_large_file(path: str, ctx: Context) -> FileSummary:
    """Process a large file in chunks, reporting progress as it goes; returns its line and byte counts.

    Args:
        path: File path, relative to the workspace root
    """
    file = _existing_file(path)
    done = lines = chunks = 0
    ends_with_newline = True
    try:
        total = file.stat().st_size
        with file.open("rb") as stream:
            while chunk := stream.read(CHUNK_BYTES):
                if ctx.is_cancelled:  # a sync tool polls for cancellation in its loop
                    raise ToolError("Cancelled")
                done += len(chunk)
                chunks += 1
                lines += chunk.count(b"\n")
                ends_with_newline = chunk.endswith(b"\n")
                ctx.report_progress(done, max(total, done), f"Processed {lines} lines...")
    except OSError as exc:
        raise _os_error(path, "read", exc) from None
    if not ends_with_newline:
        lines += 1  # a last line without a newline still counts
    return FileSummary(path=path, bytes=done, lines=lines, chunks=chunks)


if __name__ == "__main__":
    server.run()
