"""The seed example server (examples/seed_server.py), end to end over real stdio.

Every tool is called through ``toolwire run`` with a raw JSON-RPC client, in the legacy era
(``initialize``, mostly 2025-11-25, older versions where behaviour differs) and in the
2026-07-28 era (``_meta`` on every request, no handshake). The weather tools talk to a local
stand-in for the Open-Meteo APIs; the file tools work on a copy of examples/sample_data.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clirun import toolwire
from tests.support.rawclient import RawClient, modern_meta

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from weather_stub import WeatherStub as WeatherApi

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SERVER = str(EXAMPLES / "seed_server.py")
TOOLS = {
    "get_weather",
    "get_weather_data",
    "calculate_sum",
    "calculator",
    "text_analyzer",
    "search_codebase",
    "get_file_content",
    "analyze_csv",
    "delete_file",
    "create_record",
    "process_large_file",
}


# -- the weather API is examples/weather_stub.py --------------------------------------------


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# -- fixtures and helpers ------------------------------------------------------------------


@pytest.fixture
def weather_api() -> Iterator[WeatherApi]:
    api = WeatherApi()
    yield api
    api.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of examples/sample_data for the file tools to read and change."""
    root = tmp_path / "workspace"
    _copy_tree(EXAMPLES / "sample_data", root)
    return root


def _copy_tree(source: Path, target: Path) -> None:
    for file in source.rglob("*"):
        if file.is_file() and "__pycache__" not in file.parts and file.name != "records.sqlite3":
            destination = target / file.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(file.read_bytes())


@pytest.fixture
def env(tmp_path: Path, workspace: Path, weather_api: WeatherApi) -> dict[str, str]:
    return {
        "TOOLWIRE_EXAMPLES_ROOT": str(workspace),
        "TOOLWIRE_EXAMPLES_DB": str(tmp_path / "records.sqlite3"),
        "TOOLWIRE_WEATHER_URL": weather_api.url,
        "TOOLWIRE_GEOCODING_URL": weather_api.url,
    }


@pytest.fixture
def client(serve: Any, env: dict[str, str]) -> RawClient:
    """The seed server, not yet initialized (modern requests need no handshake)."""
    return serve(SERVER, env=env)  # type: ignore[no-any-return]


@pytest.fixture
def legacy(client: RawClient) -> RawClient:
    """The seed server after a 2025-11-25 handshake."""
    assert client.initialize("2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    return client


def call(
    client: RawClient, name: str, arguments: dict[str, Any], *, modern: bool = False, **meta: Any
) -> dict[str, Any]:
    """The whole response (``result`` or ``error``) to a ``tools/call``."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = modern_meta(**meta)
    elif meta:
        params["_meta"] = meta
    return client.request("tools/call", params)


def ok(client: RawClient, name: str, arguments: dict[str, Any], **options: Any) -> dict[str, Any]:
    """The result of a call that must succeed."""
    answer = call(client, name, arguments, **options)
    assert "result" in answer, answer
    assert not answer["result"].get("isError"), answer["result"]
    return answer["result"]  # type: ignore[no-any-return]


def failed(client: RawClient, name: str, arguments: dict[str, Any], **options: Any) -> str:
    """The text of a call that must end in an execution error (``isError: true``)."""
    answer = call(client, name, arguments, **options)
    assert "result" in answer, answer
    result = answer["result"]
    assert result.get("isError") is True, result
    assert len(result["content"]) == 1 and result["content"][0]["type"] == "text"
    assert "structuredContent" not in result
    return result["content"][0]["text"]  # type: ignore[no-any-return]


def only_text(result: dict[str, Any]) -> str:
    assert [block["type"] for block in result["content"]] == ["text"], result
    return result["content"][0]["text"]  # type: ignore[no-any-return]


def progress_of(client: RawClient) -> list[dict[str, Any]]:
    return [n["params"] for n in client.notifications if n.get("method") == "notifications/progress"]


# -- discovery -----------------------------------------------------------------------------


def test_lists_every_tool_with_schemas_annotations_and_docs(legacy: RawClient) -> None:
    tools = {tool["name"]: tool for tool in legacy.request("tools/list")["result"]["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool["description"] and tool["inputSchema"]["type"] == "object", tool
        for name, schema in tool["inputSchema"]["properties"].items():
            assert schema.get("description"), f"{tool['name']}.{name} has no description"

    weather = tools["get_weather"]
    assert weather["title"] == "Weather Information Provider"
    assert weather["annotations"] == {"readOnlyHint": True, "openWorldHint": True}
    assert weather["inputSchema"]["required"] == ["location"]
    assert "outputSchema" not in weather

    output = tools["get_weather_data"]["outputSchema"]
    assert output["type"] == "object"
    assert {k: v["type"] for k, v in output["properties"].items()} == {
        "temperature": "number",
        "conditions": "string",
        "humidity": "number",
    }
    assert sorted(output["required"]) == ["conditions", "humidity", "temperature"]
    assert "Celsius" in output["properties"]["temperature"]["description"]

    assert tools["calculate_sum"]["title"] == "Calculate Sum"
    assert tools["calculate_sum"]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    operation = tools["calculator"]["inputSchema"]["properties"]["operation"]
    assert operation["enum"] == ["add", "subtract", "multiply", "divide"]

    search = tools["search_codebase"]
    assert search["description"].startswith("Search the codebase for a pattern, with regex and file-type filtering")
    properties = search["inputSchema"]["properties"]
    assert search["inputSchema"]["required"] == ["pattern"]
    assert properties["fileType"]["anyOf"][0]["enum"] == [".ts", ".py", ".js", ".md", ".rs", ".go"]
    assert properties["caseSensitive"]["type"] == "boolean" and properties["caseSensitive"]["default"] is False
    assert properties["maxResults"] | {"description": ""} == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 20,
        "description": "",
    }

    assert tools["delete_file"]["title"] == "Delete File"
    assert tools["delete_file"]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert tools["create_record"]["title"] == "Create Database Record"
    assert tools["create_record"]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert tools["create_record"]["inputSchema"]["properties"]["data"]["type"] == "object"
    # The Context parameter is not part of the schema.
    assert list(tools["process_large_file"]["inputSchema"]["properties"]) == ["path"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_older_versions_see_only_what_they_know(client: RawClient, version: str) -> None:
    client.initialize(version)
    tools = {tool["name"]: tool for tool in client.request("tools/list")["result"]["tools"]}
    assert set(tools) == TOOLS
    weather, data = tools["get_weather"], tools["get_weather_data"]
    if version == "2024-11-05":
        assert set(weather) == set(data) == {"name", "description", "inputSchema"}
    elif version == "2025-03-26":  # annotations, carrying the title; no outputSchema yet
        assert weather["annotations"]["title"] == "Weather Information Provider"
        assert "title" not in weather and "outputSchema" not in data
    else:
        assert weather["title"] == "Weather Information Provider"
        assert data["outputSchema"]["required"] == ["temperature", "conditions", "humidity"]
        # Legacy output schemas are objects: a number result is wrapped.
        assert tools["calculate_sum"]["outputSchema"]["properties"] == {"result": {"type": "number"}}


def test_modern_discovery_lists_the_same_tools(client: RawClient) -> None:
    discovered = client.request("server/discover", {"_meta": modern_meta()})["result"]
    assert discovered["supportedVersions"][0] == "2026-07-28"
    listed = client.request("tools/list", {"_meta": modern_meta()})["result"]
    assert listed["resultType"] == "complete" and listed["ttlMs"] >= 0
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == TOOLS
    assert tools["calculate_sum"]["outputSchema"] == {"type": "number"}  # any JSON type in 2026-07-28
    assert tools["delete_file"]["annotations"]["destructiveHint"] is True


# -- weather ---------------------------------------------------------------------------------


def test_get_weather_calls_the_weather_api(legacy: RawClient, weather_api: WeatherApi) -> None:
    result = ok(legacy, "get_weather", {"location": "New York"})
    assert result == {
        "content": [
            {"type": "text", "text": "Current weather in New York: Temperature: 22.5°C, Conditions: Partly cloudy"}
        ]
    }
    (geo_path, geo), (forecast_path, forecast) = weather_api.requests
    assert geo_path == "/v1/search" and geo == {"name": "New York", "count": "1"}
    assert forecast_path == "/v1/forecast"
    assert forecast == {
        "latitude": "40.71",
        "longitude": "-74.01",
        "current": "temperature_2m,relative_humidity_2m,weather_code",
    }


def test_get_weather_in_the_modern_era(client: RawClient) -> None:
    result = ok(client, "get_weather", {"location": "paris"}, modern=True)
    assert result["resultType"] == "complete"
    assert only_text(result) == "Current weather in Paris: Temperature: 18°C, Conditions: Overcast"


def test_get_weather_names_unknown_weather_codes(legacy: RawClient) -> None:
    text = only_text(ok(legacy, "get_weather", {"location": "Oddville"}))
    assert text == "Current weather in Oddville: Temperature: -3.25°C, Conditions: Unknown (WMO code 42)"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_get_weather_data_is_structured_from_2025_06_18(client: RawClient, version: str) -> None:
    client.initialize(version)
    result = ok(client, "get_weather_data", {"location": "New York"})
    expected = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
    assert json.loads(only_text(result)) == expected  # the text copy, for every version
    if version >= "2025-06-18":
        assert result["structuredContent"] == expected
    else:
        assert "structuredContent" not in result


def test_get_weather_data_in_the_modern_era(client: RawClient) -> None:
    result = ok(client, "get_weather_data", {"location": "Paris"}, modern=True)
    assert result["resultType"] == "complete"
    assert result["structuredContent"] == {"temperature": 18.0, "conditions": "Overcast", "humidity": 72.0}


@pytest.mark.parametrize("tool", ["get_weather", "get_weather_data"])
def test_unknown_location_is_an_execution_error(legacy: RawClient, tool: str) -> None:
    assert failed(legacy, tool, {"location": "Atlantis"}) == "Weather lookup failed: location not found: Atlantis"


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("Erroring", "Failed to fetch weather data: the weather service answered HTTP 503"),
        ("Garbled", "Failed to fetch weather data: the weather service sent invalid JSON"),
        ("Nanville", "Failed to fetch weather data: the weather service sent invalid JSON"),
        ("Halfway", "Failed to fetch weather data: unexpected answer from the weather service (KeyError("),
    ],
)
def test_weather_api_failures_are_execution_errors(legacy: RawClient, location: str, reason: str) -> None:
    assert failed(legacy, "get_weather_data", {"location": location}).startswith(reason)
    assert legacy.request("ping")["result"] == {}  # and the server carries on


def test_unreachable_weather_api_is_an_execution_error(serve: Any, env: dict[str, str]) -> None:
    unreachable = closed_port_url()
    client = serve(SERVER, env={**env, "TOOLWIRE_GEOCODING_URL": unreachable, "TOOLWIRE_WEATHER_URL": unreachable})
    client.initialize()
    text = failed(client, "get_weather", {"location": "Paris"})
    assert text.startswith("Failed to fetch weather data: ") and "refused" in text.lower()
    text = failed(client, "get_weather_data", {"location": "Paris"}, modern=True)
    assert text.startswith("Failed to fetch weather data: ")


# -- arithmetic and text -------------------------------------------------------------------


def test_calculate_sum_in_each_era(serve: Any, env: dict[str, str]) -> None:
    old = serve(SERVER, env=env)
    old.initialize("2024-11-05")
    assert ok(old, "calculate_sum", {"a": 2.5, "b": 4}) == {"content": [{"type": "text", "text": "6.5"}]}

    legacy = serve(SERVER, env=env)
    legacy.initialize("2025-11-25")
    result = ok(legacy, "calculate_sum", {"a": 2.5, "b": 4})
    assert result["structuredContent"] == {"result": 6.5} and only_text(result) == "6.5"
    # Models sometimes send numbers as strings: decorated tools accept exact numeric strings.
    assert ok(legacy, "calculate_sum", {"a": "1.25", "b": "-1"})["structuredContent"] == {"result": 0.25}

    result = ok(legacy, "calculate_sum", {"a": -0.5, "b": 0.25}, modern=True)
    assert result["structuredContent"] == -0.25 and result["resultType"] == "complete"


@pytest.mark.parametrize(
    ("operation", "expected"),
    [("add", 9.5), ("subtract", 5.5), ("multiply", 15.0), ("divide", 3.75)],
)
def test_calculator_operations(legacy: RawClient, operation: str, expected: float) -> None:
    result = ok(legacy, "calculator", {"operation": operation, "a": 7.5, "b": 2})
    assert result["structuredContent"] == {"result": expected}
    assert json.loads(only_text(result)) == expected


def test_calculator_errors(legacy: RawClient) -> None:
    assert failed(legacy, "calculator", {"operation": "divide", "a": 1, "b": 0}) == "Cannot divide by zero"
    assert failed(legacy, "calculator", {"operation": "divide", "a": 1, "b": 0}, modern=True) == "Cannot divide by zero"
    # JSON has no infinity: an overflow is reported, not sent as an invalid number.
    assert "not a finite number" in failed(legacy, "calculator", {"operation": "multiply", "a": 1e308, "b": 10})


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_invalid_arguments_by_version(client: RawClient, version: str) -> None:
    modern = version == "2026-07-28"
    if not modern:
        client.initialize(version)
    answer = call(client, "calculator", {"operation": "power", "a": 2, "b": 3}, modern=modern)
    if version <= "2025-06-18":
        assert answer["error"]["code"] == -32602
        message = answer["error"]["message"]
    else:  # from 2025-11-25 on, the model gets to read the problem and try again
        assert answer["result"]["isError"] is True
        message = answer["result"]["content"][0]["text"]
    assert message.startswith("Invalid arguments for tool 'calculator'") and "operation" in message
    # Unknown tools are protocol errors in every version.
    assert call(client, "no_such_tool", {}, modern=modern)["error"]["code"] == -32602


def test_text_analyzer(legacy: RawClient) -> None:
    text = "The quick brown fox\njumps over  the lazy dog.\n"
    result = ok(legacy, "text_analyzer", {"text": text})
    assert result["structuredContent"] == {"characters": 46, "words": 9, "lines": 2}
    assert json.loads(only_text(result)) == {"characters": 46, "words": 9, "lines": 2}
    assert ok(legacy, "text_analyzer", {"text": ""})["structuredContent"] == {"characters": 0, "words": 0, "lines": 0}
    modern = ok(legacy, "text_analyzer", {"text": "héllo wörld ✓"}, modern=True)
    assert modern["structuredContent"] == {"characters": 13, "words": 3, "lines": 1}


# -- search_codebase -------------------------------------------------------------------------


def test_search_codebase_finds_matches_with_file_type_filter(legacy: RawClient) -> None:
    result = ok(legacy, "search_codebase", {"pattern": r"def \w+\(", "fileType": ".py"})
    expected = [
        {"path": "src/helpers.py", "line": 4, "text": "def format_price(value: float) -> str:"},
        {"path": "src/helpers.py", "line": 8, "text": "def parse_quantity(text: str) -> int:"},
        {"path": "src/inventory.py", "line": 14, "text": "def __init__(self) -> None:"},
        {"path": "src/inventory.py", "line": 17, "text": "def add(self, item: Item) -> None:"},
        {"path": "src/inventory.py", "line": 21, "text": "def total_value(self) -> float:"},
    ]
    assert result["structuredContent"] == {"matches": expected, "truncated": False}
    assert only_text(result).splitlines() == [f"{m['path']}:{m['line']}: {m['text']}" for m in expected]


def test_search_codebase_case_sensitivity_and_file_types(legacy: RawClient) -> None:
    everywhere = ok(legacy, "search_codebase", {"pattern": "todo"})["structuredContent"]["matches"]
    found = [(m["path"], m["line"]) for m in everywhere]
    assert found == [("README.md", 9), ("src/inventory.py", 18), ("web/client.ts", 11)]
    exact_case = ok(legacy, "search_codebase", {"pattern": "todo", "caseSensitive": True})
    assert exact_case["structuredContent"]["matches"] == []
    exact = ok(legacy, "search_codebase", {"pattern": "TODO", "caseSensitive": True, "fileType": ".ts"})
    assert only_text(exact) == "web/client.ts:11: // TODO: handle errors"
    nothing = ok(legacy, "search_codebase", {"pattern": "zebra", "fileType": ".go"})
    assert only_text(nothing) == "No matches for 'zebra'"
    assert nothing["structuredContent"] == {"matches": [], "truncated": False}


def test_search_codebase_max_results(legacy: RawClient) -> None:
    result = ok(legacy, "search_codebase", {"pattern": "item", "maxResults": 2})
    assert len(result["structuredContent"]["matches"]) == 2 and result["structuredContent"]["truncated"] is True
    assert only_text(result).splitlines()[-1] == "(showing the first 2 matches; there are more)"
    invalid = failed(legacy, "search_codebase", {"pattern": "item", "maxResults": 500})
    assert "maxResults" in invalid and "100" in invalid


def test_search_codebase_invalid_regex_is_an_execution_error(legacy: RawClient) -> None:
    text = failed(legacy, "search_codebase", {"pattern": "def (unclosed"})
    assert text.startswith(
        "Invalid regular expression 'def (unclosed': missing ): def (unclosed. The search engine (RE2)"
    )
    assert failed(legacy, "search_codebase", {"pattern": "[z-a]"}, modern=True).startswith("Invalid regular expression")


def test_search_codebase_stays_inside_the_root(client: RawClient, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("needle = 'outside'\n")
    (workspace / "leak.py").symlink_to(outside / "secret.py")
    (workspace / "linked_dir").symlink_to(outside, target_is_directory=True)
    (workspace / "src" / "needle.py").write_text("needle = 'inside'\n")
    result = ok(client, "search_codebase", {"pattern": "needle"}, modern=True)
    assert result["structuredContent"]["matches"] == [{"path": "src/needle.py", "line": 1, "text": "needle = 'inside'"}]


# -- get_file_content ----------------------------------------------------------------------


def test_get_file_content_whole_and_ranges(legacy: RawClient, workspace: Path) -> None:
    whole = (workspace / "src" / "helpers.py").read_text()
    assert ok(legacy, "get_file_content", {"path": "src/helpers.py"}) == {"content": [{"type": "text", "text": whole}]}
    lines = whole.splitlines(keepends=True)

    def read(**lines_wanted: int) -> str:
        return only_text(ok(legacy, "get_file_content", {"path": "src/helpers.py", **lines_wanted}))

    assert read(startLine=4, endLine=5) == "".join(lines[3:5])
    assert read(startLine=8) == "".join(lines[7:])
    assert read(endLine=1) == lines[0]
    assert read(startLine=12, endLine=12) == lines[11]
    assert read(startLine=11, endLine=99) == "".join(lines[10:])  # an end past the last line: to the end
    modern = ok(legacy, "get_file_content", {"path": "./web/../README.md", "startLine": 1, "endLine": 1}, modern=True)
    assert only_text(modern) == "# Sample project\n"


def test_get_file_content_bad_ranges_and_files(legacy: RawClient, workspace: Path) -> None:
    assert failed(legacy, "get_file_content", {"path": "src/helpers.py", "startLine": 5, "endLine": 2}) == (
        "Invalid line range: startLine (5) is after endLine (2)"
    )
    assert failed(legacy, "get_file_content", {"path": "src/helpers.py", "startLine": 50}) == (
        "Invalid line range: startLine (50) is past the end of src/helpers.py (12 lines)"
    )
    assert "startLine" in failed(legacy, "get_file_content", {"path": "src/helpers.py", "startLine": 0})
    assert failed(legacy, "get_file_content", {"path": "src/missing.py"}) == "File not found: src/missing.py"
    assert failed(legacy, "get_file_content", {"path": "src"}) == "src is a directory, not a file"
    (workspace / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    assert failed(legacy, "get_file_content", {"path": "blob.bin"}) == "blob.bin is not a UTF-8 text file"
    # A file too big to return whole can still be read a range at a time.
    (workspace / "huge.txt").write_text("".join(f"{i}\n" for i in range(300_000)))
    assert "ask for a range with startLine/endLine" in failed(legacy, "get_file_content", {"path": "huge.txt"})
    assert (
        only_text(ok(legacy, "get_file_content", {"path": "huge.txt", "startLine": 1000, "endLine": 1001}))
        == "999\n1000\n"
    )


def test_file_tools_refuse_paths_outside_the_root(legacy: RawClient, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    (workspace / "innocent.txt").symlink_to(secret)
    (workspace / "escape").symlink_to(tmp_path, target_is_directory=True)
    (workspace / "alias.md").symlink_to(workspace / "README.md")  # a link that stays inside is fine

    absolute = failed(legacy, "get_file_content", {"path": str(secret)})
    assert absolute.startswith("Access denied: absolute paths are not allowed")
    traversal = failed(legacy, "get_file_content", {"path": "../secret.txt"})
    assert traversal == "Access denied: the path escapes the workspace root: ../secret.txt"
    assert failed(legacy, "get_file_content", {"path": "src/../../secret.txt"}).startswith(
        "Access denied: the path escapes"
    )
    for path in ("innocent.txt", "escape/secret.txt", "src/../escape/secret.txt"):
        text = failed(legacy, "get_file_content", {"path": path})
        assert text == f"Access denied: the path leads outside the workspace root through a symbolic link: {path}"
    assert only_text(ok(legacy, "get_file_content", {"path": "alias.md", "endLine": 1})) == "# Sample project\n"

    # Every file tool goes through the same check.
    assert failed(legacy, "analyze_csv", {"filepath": "../secret.txt", "operations": ["sum"]}).startswith(
        "Access denied"
    )
    assert failed(legacy, "process_large_file", {"path": "innocent.txt"}).startswith("Access denied")
    assert failed(legacy, "delete_file", {"path": str(secret)}, modern=True).startswith("Access denied")
    assert secret.read_text() == "top secret\n"


# -- analyze_csv -----------------------------------------------------------------------------


def test_analyze_csv_numeric_columns(legacy: RawClient) -> None:
    result = ok(legacy, "analyze_csv", {"filepath": "data/sales.csv", "operations": ["sum", "average", "count"]})
    structured = result["structuredContent"]
    assert json.loads(only_text(result)) == structured
    assert structured["filepath"] == "data/sales.csv" and structured["rows"] == 5
    assert structured["skipped_columns"] == ["region", "product"]
    columns = structured["columns"]
    assert set(columns) == {"units", "revenue", "discount"}
    assert columns["units"] == {"sum": 47, "average": 9.4, "count": 5}
    assert columns["revenue"]["sum"] == pytest.approx(1145.52) and columns["revenue"]["count"] == 5
    assert columns["revenue"]["average"] == pytest.approx(229.104)
    # The empty discount cell is left out of the count and the average.
    assert columns["discount"]["count"] == 4
    assert columns["discount"]["sum"] == pytest.approx(0.3) and columns["discount"]["average"] == pytest.approx(0.075)


def test_analyze_csv_only_requested_operations(client: RawClient, workspace: Path) -> None:
    (workspace / "odd.csv").write_text("name,score,note\nann,1.5,x\nbob,nan,y\n\ncid,2.5,z\n")
    result = ok(client, "analyze_csv", {"filepath": "odd.csv", "operations": ["count"]}, modern=True)
    # "nan" is not a number a JSON result can carry: the column is not numeric.
    assert result["structuredContent"] == {
        "filepath": "odd.csv",
        "rows": 3,
        "columns": {},
        "skipped_columns": ["name", "score", "note"],
    }
    result = ok(client, "analyze_csv", {"filepath": "data/sales.csv", "operations": ["average"]}, modern=True)
    assert result["structuredContent"]["columns"]["units"] == {"average": 9.4}


def test_analyze_csv_errors(legacy: RawClient, workspace: Path) -> None:
    assert (
        failed(legacy, "analyze_csv", {"filepath": "data/none.csv", "operations": ["sum"]})
        == "File not found: data/none.csv"
    )
    (workspace / "empty.csv").write_text("")
    assert "header row is needed" in failed(legacy, "analyze_csv", {"filepath": "empty.csv", "operations": ["sum"]})
    assert "operations" in failed(legacy, "analyze_csv", {"filepath": "data/sales.csv", "operations": []})
    assert "operations" in failed(legacy, "analyze_csv", {"filepath": "data/sales.csv", "operations": ["median"]})


# -- delete_file -----------------------------------------------------------------------------


def test_delete_file_is_idempotent(legacy: RawClient, workspace: Path) -> None:
    target = workspace / "src" / "helpers.py"
    assert only_text(ok(legacy, "delete_file", {"path": "src/helpers.py"})) == "Deleted src/helpers.py"
    assert not target.exists()
    again = ok(legacy, "delete_file", {"path": "src/helpers.py"})
    assert only_text(again) == "src/helpers.py does not exist: nothing to delete"
    assert (workspace / "src" / "inventory.py").exists()


def test_delete_file_refusals_and_links(client: RawClient, workspace: Path) -> None:
    assert (
        failed(client, "delete_file", {"path": "src"}, modern=True) == "src is a directory: only files can be deleted"
    )
    assert (workspace / "src").is_dir()
    assert failed(client, "delete_file", {"path": "../records.sqlite3"}, modern=True).startswith("Access denied")
    assert (workspace / "README.md").exists()
    # Deleting a link removes the link, never the file it points to.
    (workspace / "alias.md").symlink_to(workspace / "README.md")
    result = ok(client, "delete_file", {"path": "alias.md"}, modern=True)
    assert only_text(result) == "Deleted the symbolic link alias.md" and result["resultType"] == "complete"
    assert not (workspace / "alias.md").is_symlink() and (workspace / "README.md").exists()


# -- create_record ---------------------------------------------------------------------------


def rows(database: Path, table: str) -> list[dict[str, Any]]:
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute(f'SELECT * FROM "{table}" ORDER BY id')]


def test_create_record_creates_tables_and_columns(legacy: RawClient, tmp_path: Path) -> None:
    database = tmp_path / "records.sqlite3"
    first = ok(legacy, "create_record", {"table": "users", "data": {"name": "Ada", "age": 36}})
    assert first["structuredContent"] == {"table": "users", "id": 1}
    assert json.loads(only_text(first)) == {"table": "users", "id": 1}
    alan = {"name": "Alan", "email": "alan@example.com", "tags": ["a", "b"]}
    second = ok(legacy, "create_record", {"table": "users", "data": alan})
    assert second["structuredContent"] == {"table": "users", "id": 2}
    event = {"ok": True, "meta": {"k": 1}, "note": None}
    modern = ok(legacy, "create_record", {"table": "events", "data": event}, modern=True)
    assert modern["structuredContent"] == {"table": "events", "id": 1}
    assert rows(database, "users") == [
        {"id": 1, "name": "Ada", "age": 36, "email": None, "tags": None},
        {"id": 2, "name": "Alan", "age": None, "email": "alan@example.com", "tags": '["a", "b"]'},
    ]
    assert rows(database, "events") == [{"id": 1, "ok": 1, "meta": '{"k": 1}', "note": None}]
    assert ok(legacy, "create_record", {"table": "events", "data": {}})["structuredContent"] == {
        "table": "events",
        "id": 2,
    }


@pytest.mark.parametrize(
    ("table", "data", "message"),
    [
        ("users; DROP TABLE users", {"name": "x"}, "Invalid table name 'users; DROP TABLE users'"),
        ('a"b', {"name": "x"}, "Invalid table name 'a\"b'"),
        ("sqlite_master", {"name": "x"}, "Invalid table name 'sqlite_master'"),
        ("users", {"name) VALUES (1); --": "x"}, "Invalid column name 'name) VALUES (1); --'"),
        ("users", {"ID": 5}, "The id column is assigned by the database"),
        ("users", {"big": 2**63}, "Database error: Python int too large to convert to SQLite INTEGER"),
    ],
)
def test_create_record_refuses_unsafe_input(
    legacy: RawClient, tmp_path: Path, table: str, data: dict[str, Any], message: str
) -> None:
    ok(legacy, "create_record", {"table": "users", "data": {"name": "first"}})
    assert failed(legacy, "create_record", {"table": table, "data": data}).startswith(message)
    assert rows(tmp_path / "records.sqlite3", "users") == [{"id": 1, "name": "first"}]  # nothing else happened


def test_create_record_concurrent_calls(legacy: RawClient, tmp_path: Path) -> None:
    """Sync tools run on worker threads at once: each call still gets its own row and columns."""
    count = 8
    for i in range(count):
        legacy.send(
            {
                "jsonrpc": "2.0",
                "id": f"insert-{i}",
                "method": "tools/call",
                "params": {"name": "create_record", "arguments": {"table": "log", "data": {f"c{i}": i}}},
            }
        )
    answers: dict[str, Any] = {}
    while len(answers) < count:  # the answers come in whatever order the calls finish
        message = legacy.receive()
        answers[message["id"]] = message
    assert set(answers) == {f"insert-{i}" for i in range(count)}
    assert sorted(a["result"]["structuredContent"]["id"] for a in answers.values()) == list(range(1, count + 1))
    stored = rows(tmp_path / "records.sqlite3", "log")
    assert len(stored) == count and set(stored[0]) == {"id", *(f"c{i}" for i in range(count))}
    values = [next(v for k, v in row.items() if k != "id" and v is not None) for row in stored]
    assert sorted(values) == list(range(count))


# -- process_large_file --------------------------------------------------------------------


def make_big_file(workspace: Path) -> tuple[str, int, int]:
    """A ~1.6 MB file whose last line has no newline: (path, bytes, lines)."""
    data = "".join(f"line {i:06d}: the quick brown fox jumps over the lazy dog\n" for i in range(30_000)) + "tail"
    (workspace / "big.log").write_text(data)
    return "big.log", len(data), 30_001


def check_progress(progress: list[dict[str, Any]], token: str | int, size: int, with_messages: bool) -> None:
    assert len(progress) == -(-size // (64 * 1024))  # one report per 64 KiB chunk
    for report in progress:
        assert report["progressToken"] == token and type(report["progressToken"]) is type(token)
        assert report["total"] == size
    values = [report["progress"] for report in progress]
    assert values == sorted(set(values)) and values[-1] == size
    if with_messages:
        counts = [int(report["message"].removeprefix("Processed ").removesuffix(" lines...")) for report in progress]
        assert counts == sorted(counts) and counts[-1] == 30_000
    else:
        assert all("message" not in report for report in progress)


def test_process_large_file_reports_progress(legacy: RawClient, workspace: Path) -> None:
    path, size, lines = make_big_file(workspace)
    legacy.notifications.clear()
    result = ok(legacy, "process_large_file", {"path": path}, progressToken="job-1")
    summary = {"path": path, "bytes": size, "lines": lines, "chunks": -(-size // (64 * 1024))}
    assert result["structuredContent"] == summary
    check_progress(progress_of(legacy), "job-1", size, with_messages=True)


def test_process_large_file_progress_in_the_modern_era(client: RawClient, workspace: Path) -> None:
    path, size, lines = make_big_file(workspace)
    result = ok(client, "process_large_file", {"path": path}, modern=True, progressToken=7)
    assert result["resultType"] == "complete" and result["structuredContent"]["lines"] == lines
    check_progress(progress_of(client), 7, size, with_messages=True)


def test_process_large_file_in_2024_11_05(client: RawClient, workspace: Path) -> None:
    path, size, lines = make_big_file(workspace)
    client.initialize("2024-11-05")
    result = ok(client, "process_large_file", {"path": path}, progressToken=0)
    assert "structuredContent" not in result and json.loads(only_text(result))["lines"] == lines
    check_progress(progress_of(client), 0, size, with_messages=False)  # progress messages came in 2025-03-26


def test_process_large_file_without_a_progress_token(legacy: RawClient, workspace: Path) -> None:
    (workspace / "small.txt").write_text("one\ntwo\n")
    (workspace / "empty.txt").write_text("")
    legacy.notifications.clear()
    assert ok(legacy, "process_large_file", {"path": "small.txt"})["structuredContent"] == {
        "path": "small.txt",
        "bytes": 8,
        "lines": 2,
        "chunks": 1,
    }
    assert ok(legacy, "process_large_file", {"path": "empty.txt"})["structuredContent"]["lines"] == 0
    assert progress_of(legacy) == []
    assert failed(legacy, "process_large_file", {"path": "nope.txt"}) == "File not found: nope.txt"


# -- the confinement helper itself, in process -------------------------------------------


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("seed_server_under_test", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_resolve_in_root_reads_the_root_when_called(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    example = load_example()
    from toolwire import ToolError

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.setenv("TOOLWIRE_EXAMPLES_ROOT", str(first))
    assert example.resolve_in_root("a/b.txt") == first.resolve() / "a" / "b.txt"
    monkeypatch.setenv("TOOLWIRE_EXAMPLES_ROOT", str(second))
    assert example.resolve_in_root("a/../c.txt") == second.resolve() / "c.txt"
    for bad in ("/etc/passwd", "..", "a/../../first/x", "bad\0name"):
        with pytest.raises(ToolError):
            example.resolve_in_root(bad)
    monkeypatch.setenv("TOOLWIRE_EXAMPLES_ROOT", str(tmp_path / "missing"))
    with pytest.raises(ToolError, match="not a directory"):
        example.resolve_in_root("x")
    monkeypatch.delenv("TOOLWIRE_EXAMPLES_ROOT")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert example.workspace_root() == (tmp_path / "data" / "toolwire" / "seed-workspace").resolve()


def test_the_tools_change_a_copy_of_the_samples_in_the_users_data_folder(tmp_path: Path) -> None:
    """Without TOOLWIRE_EXAMPLES_ROOT, the first call copies sample_data to the user's data
    folder; the tools that write change that copy, never the repository's files."""
    samples = EXAMPLES / "sample_data"
    before = {path: path.read_bytes() for path in samples.rglob("*") if path.is_file()}
    data = {"XDG_DATA_HOME": str(tmp_path / "data")}
    created, deleted, read = (
        toolwire("call", SERVER, *words, **data)
        for words in (
            ["create_record", "table=notes", 'data={"text": "hi"}'],
            ["delete_file", "path=README.md"],
            ["get_file_content", "path=data/sales.csv", "endLine=1"],
        )
    )
    assert (created.returncode, deleted.returncode, read.returncode) == (0, 0, 0), created.stderr + deleted.stderr
    assert read.stdout.startswith("region,product")
    after = {path: path.read_bytes() for path in samples.rglob("*") if path.is_file()}
    assert after == before  # nothing written, nothing deleted
    copy = tmp_path / "data" / "toolwire" / "seed-workspace"
    assert (copy / "records.sqlite3").is_file() and not (copy / "README.md").exists()
    assert (copy / "src" / "inventory.py").read_bytes() == (samples / "src" / "inventory.py").read_bytes()


def test_sample_data_stays_small() -> None:
    files = [f for f in (EXAMPLES / "sample_data").rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    assert {f.suffix for f in files} >= {".py", ".ts", ".md", ".csv"}
    assert sum(os.path.getsize(f) for f in files) < 200 * 1024
