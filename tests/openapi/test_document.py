"""Reading a document: a dict, a JSON or YAML file, a URL served over a real socket; what is
not OpenAPI 3.0/3.1 refused in one line that says what to do."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.clirun import absent
from toolwire.openapi import OpenAPIError, load_document, map_document
from toolwire.openapi.document import MAX_BYTES

DATA = Path(__file__).parent / "data"
MINIMAL = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}


class Served:
    """Bodies served by a real HTTP server on 127.0.0.1, by path (a tuple: status, body)."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, bytes]] = {}
        answers = self.answers

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = answers.get(self.path, (404, b"not here"))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def served() -> Iterator[Served]:
    serving = Served()
    thread = threading.Thread(target=serving.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield serving
    finally:
        serving.server.shutdown()
        serving.server.server_close()
        thread.join()


def test_a_dict_a_json_file_and_a_yaml_file_give_the_same_document() -> None:
    from_json = load_document(DATA / "petstore-3.0.json")
    assert load_document(str(DATA / "petstore-3.0.yaml")) == from_json
    assert load_document(from_json) == from_json
    assert from_json["info"]["title"] == "Swagger Petstore"


def test_yaml_response_codes_written_as_numbers_are_read_as_text(tmp_path: Path) -> None:
    text = """openapi: 3.0.3
info: {title: Numbers, version: '1'}
paths:
  /x:
    get:
      operationId: x
      responses:
        200:
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {n: {type: integer}}}
"""
    (tmp_path / "api.yaml").write_text(text)
    document = load_document(tmp_path / "api.yaml")
    assert list(document["paths"]["/x"]["get"]["responses"]) == ["200"]
    (operation,) = map_document(document).operations
    assert operation.output_schema == {"type": "object", "properties": {"n": {"type": "integer"}}}


def test_a_url_is_read_once(served: Served) -> None:
    served.answers["/openapi.json"] = (200, orjson.dumps(MINIMAL))
    served.answers["/openapi.yaml"] = (200, b"openapi: 3.0.0\ninfo: {title: y, version: '1'}\npaths: {}\n")
    assert load_document(f"{served.url}/openapi.json") == MINIMAL
    assert load_document(f"{served.url}/openapi.yaml")["info"]["title"] == "y"


def test_a_url_that_does_not_answer_200_is_an_error(served: Served) -> None:
    with pytest.raises(
        OpenAPIError, match=r"^fetching the OpenAPI document http://127\.0\.0\.1:\d+/gone answered HTTP 404, not 200$"
    ):
        load_document(f"{served.url}/gone")


def test_a_url_nobody_listens_at_is_an_error(served: Served) -> None:
    url = served.url
    served.server.shutdown()
    served.server.server_close()
    with pytest.raises(OpenAPIError, match=r"^cannot fetch the OpenAPI document: cannot reach"):
        load_document(f"{url}/openapi.json")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"swagger": "2.0", "info": {}, "paths": {}},
            "the document is Swagger 2.0; toolwire reads OpenAPI 3.0 and 3.1: convert it first",
        ),
        ({"openapi": "4.0.0", "paths": {}}, "the document's 'openapi' is '4.0.0'; toolwire reads OpenAPI 3.0 and 3.1"),
        ({"openapi": 3.1, "paths": {}}, "the document's 'openapi' is '3.1'; toolwire reads"),
        ({"info": {}, "paths": {}}, "the document's 'openapi' is 'None'"),
        ({"openapi": "3.0.3", "paths": ["/pets"]}, "the document's 'paths' is a list, not an object of path items"),
    ],
)
def test_what_is_not_openapi_3_is_refused_in_one_line(document: dict[str, Any], message: str) -> None:
    for attempt in (load_document, map_document):
        with pytest.raises(OpenAPIError, match="^" + message.replace("(", r"\(").replace(")", r"\)")) as raised:
            attempt(document)
        assert "\n" not in str(raised.value)


def test_swagger_files_are_refused_too(tmp_path: Path) -> None:
    (tmp_path / "swagger.yaml").write_text("swagger: '2.0'\ninfo: {title: old, version: '1'}\npaths: {}\n")
    with pytest.raises(OpenAPIError, match=r"is Swagger 2\.0; toolwire reads OpenAPI 3\.0 and 3\.1"):
        load_document(tmp_path / "swagger.yaml")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1, 2]", "an OpenAPI document is a JSON object, not a list"),
        (b'{"openapi": "3.0.0",', "is not valid JSON"),
        (b"openapi: [\n", "is not usable YAML"),
        (b"a: &x [1]\nb: *x\n", r"is not usable YAML: aliases \(\*x\) are not allowed"),
        (b"a: " + b"[" * 5000 + b"]" * 5000, r"is not usable YAML: nested more than 128 levels deep \(line 1\)"),
        (b"\xff\xfe\x00garbage", "is neither JSON nor UTF-8 YAML"),
        (b"just words", "an OpenAPI document is a JSON object, not a string"),
    ],
)
def test_a_file_that_is_not_a_document_is_an_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "api"
    path.write_bytes(content)
    with pytest.raises(OpenAPIError, match=message):
        load_document(path)


def test_a_missing_or_huge_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(OpenAPIError, match=r"^cannot read the OpenAPI document .*nowhere\.json: No such file"):
        load_document(tmp_path / "nowhere.json")
    with (tmp_path / "huge.json").open("wb") as file:
        file.truncate(MAX_BYTES + 1)
    with pytest.raises(OpenAPIError, match="is larger than 64 MB"):
        load_document(tmp_path / "huge.json")


def test_a_yaml_document_without_pyyaml_says_which_extra_to_install() -> None:
    code = "from toolwire.openapi import load_document\nload_document(__import__('sys').argv[1])"
    env = {**os.environ, **absent("yaml")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(DATA / "petstore-3.0.yaml")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "toolwire.extras.ExtraMissing: a YAML OpenAPI document needs the 'openapi' extra: pip install "
        "'toolwire[openapi]' (in a checkout of toolwire: pip install -e '.[openapi]')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(DATA / "petstore-3.0.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr  # JSON needs no extra
