"""The request one call makes: path escaping, every query style OpenAPI defines, headers,
cookies and bodies (toolwire.openapi.request; the values of the OpenAPI specification's own
style examples, section "Style Examples")."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolwire.openapi import Body, Operation, Parameter
from toolwire.openapi.request import RequestInvalid, build_request


def target(parameter: Parameter, value: Any, path: str = "/things") -> str:
    operation = Operation(name="op", method="GET", path=path, parameters=(parameter,))
    return build_request(operation, {parameter.argument: value}).target


COLOR = ["blue", "black", "brown"]
POINT = {"R": 100, "G": 200, "B": 150}


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("simple", False, "blue", "/c/blue"),
        ("simple", False, COLOR, "/c/blue,black,brown"),
        ("simple", False, POINT, "/c/R,100,G,200,B,150"),
        ("simple", True, POINT, "/c/R=100,G=200,B=150"),
        ("label", False, "blue", "/c/.blue"),
        ("label", False, COLOR, "/c/.blue,black,brown"),
        ("label", True, COLOR, "/c/.blue.black.brown"),
        ("label", True, POINT, "/c/.R=100.G=200.B=150"),
        ("matrix", False, "blue", "/c/;color=blue"),
        ("matrix", False, COLOR, "/c/;color=blue,black,brown"),
        ("matrix", True, COLOR, "/c/;color=blue;color=black;color=brown"),
        ("matrix", False, POINT, "/c/;color=R,100,G,200,B,150"),
        ("matrix", True, POINT, "/c/;R=100;G=200;B=150"),
    ],
)
def test_path_parameters_follow_their_style(style: str, explode: bool, value: Any, expected: str) -> None:
    parameter = Parameter("color", "color", "path", required=True, style=style, explode=explode)
    assert target(parameter, value, "/c/{color}") == expected


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("form", True, "blue", "/things?color=blue"),
        ("form", True, COLOR, "/things?color=blue&color=black&color=brown"),
        ("form", False, COLOR, "/things?color=blue,black,brown"),
        ("form", True, POINT, "/things?R=100&G=200&B=150"),
        ("form", False, POINT, "/things?color=R,100,G,200,B,150"),
        ("spaceDelimited", False, COLOR, "/things?color=blue%20black%20brown"),
        ("pipeDelimited", False, COLOR, "/things?color=blue|black|brown"),
        ("deepObject", True, POINT, "/things?color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
        ("deepObject", True, {"a": {"b": 1}}, "/things?color%5Ba%5D%5Bb%5D=1"),
    ],
)
def test_query_parameters_follow_their_style(style: str, explode: bool, value: Any, expected: str) -> None:
    assert target(Parameter("color", "color", "query", style=style, explode=explode), value) == expected


def test_values_are_percent_encoded_and_a_path_value_stays_one_segment() -> None:
    path = Parameter("name", "name", "path", required=True, style="simple", explode=False)
    assert target(path, "a/b c?#%", "/files/{name}") == "/files/a%2Fb%20c%3F%23%25"
    query = Parameter("q", "q", "query")
    assert target(query, "fish & chips=1#2") == "/things?q=fish%20%26%20chips%3D1%232"


def test_allow_reserved_keeps_reserved_characters_but_not_those_that_change_the_query() -> None:
    query = Parameter("next", "next", "query", allow_reserved=True)
    assert target(query, "/a/b:c?d=e&f#g+h") == "/things?next=/a/b:c?d%3De%26f%23g%2Bh"


def test_booleans_and_numbers_are_json_and_null_leaves_an_optional_parameter_out() -> None:
    flags = (Parameter("on", "on", "query"), Parameter("n", "n", "query"), Parameter("gone", "gone", "query"))
    operation = Operation(name="op", method="GET", path="/f", parameters=flags)
    assert build_request(operation, {"on": True, "n": 2.5, "gone": None}).target == "/f?on=true&n=2.5"


def test_headers_and_cookies() -> None:
    parameters = (
        Parameter("trace", "X-Trace", "header", style="simple", explode=False),
        Parameter("ids", "X-Ids", "header", style="simple", explode=False),
        Parameter("session", "session", "cookie"),
        Parameter("prefs", "prefs", "cookie", explode=False),
    )
    operation = Operation(name="op", method="GET", path="/h", parameters=parameters)
    built = build_request(operation, {"trace": "t-1", "ids": [1, 2], "session": "a b;c", "prefs": ["x", "y"]})
    assert built.headers == [("X-Trace", "t-1"), ("X-Ids", "1,2"), ("Cookie", "session=a%20b%3Bc; prefs=x,y")]


def test_a_line_break_in_a_header_is_refused_naming_the_argument() -> None:
    operation = Operation(name="op", method="GET", path="/h", parameters=(Parameter("trace", "X-Trace", "header"),))
    with pytest.raises(RequestInvalid, match="'trace' goes in a header, which cannot hold line breaks"):
        build_request(operation, {"trace": "a\r\nSet-Cookie: x=1"})


@pytest.mark.parametrize("header", ["Host", "authorization", "Content-Length", "Cookie", "Transfer-Encoding"])
def test_an_argument_never_sets_a_header_that_frames_the_message_or_carries_credentials(header: str) -> None:
    operation = Operation(name="op", method="GET", path="/h", parameters=(Parameter("value", header, "header"),))
    with pytest.raises(RequestInvalid, match=f"'value' would set the {header} header, which only the server sets"):
        build_request(operation, {"value": "x"})


def test_a_disambiguated_argument_goes_under_its_own_name() -> None:
    parameters = (
        Parameter("id", "id", "path", required=True, style="simple", explode=False),
        Parameter("body_id", "id", "body"),
        Parameter("name", "name", "body"),
    )
    operation = Operation(
        name="op", method="PUT", path="/pets/{id}", parameters=parameters, body=Body("application/json", True)
    )
    built = build_request(operation, {"id": 7, "body_id": 8, "name": "Rex"})
    assert built.target == "/pets/7"
    assert built.media_type == "application/json" and orjson.loads(built.content or b"") == {"id": 8, "name": "Rex"}


def test_a_whole_body_argument_and_an_optional_body_left_out() -> None:
    whole = Operation(name="op", method="POST", path="/tags", body=Body("application/json", False, argument="body"))
    assert build_request(whole, {"body": ["a", "b"]}).content == b'["a","b"]'
    assert build_request(whole, {}).content is None and build_request(whole, {}).media_type is None


def test_form_fields_repeat_lists_and_leave_out_nulls() -> None:
    parameters = (Parameter("a", "a", "body"), Parameter("b", "b", "body"), Parameter("c", "c", "body"))
    operation = Operation(
        name="op", method="POST", path="/f", parameters=parameters, body=Body("multipart/form-data", True)
    )
    built = build_request(operation, {"a": "x", "b": [1, 2], "c": None})
    assert built.form == [("a", "x"), ("b", "1"), ("b", "2")] and built.content is None
