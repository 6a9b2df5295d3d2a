"""Frontmatter from anyone: read within bounds (no aliases, 32 levels, 10,000 values, 64 KiB)
and only as JSON carries it, each refusal one line saying what and where; and properties over
random YAML within the bounds, with aliases, and nested past them."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolwire.skills import SkillInvalid, load_skill
from toolwire.skills.frontmatter import MAX_FRONTMATTER, FrontmatterInvalid, split
from toolwire.skills.yaml_json import CORE_SCHEMA, MAX_DEPTH, MAX_NODES, YAMLRefused, load


class Dumper(yaml.SafeDumper):
    """PyYAML's dumper quoting, besides what YAML 1.1 would read as other than a string,
    what the core schema would (``0o17``, ``1e3``)."""


for _tag, _pattern, _first in CORE_SCHEMA:
    Dumper.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), [*_first])

#: An alias bomb: 370 bytes that PyYAML's safe loader grows to 9**7 strings.
BOMB = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n" for previous, name in zip("abcdef", "bcdefg", strict=True)
)


def manifest(extra: str) -> str:
    return f"---\nname: hostile\ndescription: Reads as little as it must\n{extra}---\nbody\n"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (BOMB, r"aliases \(\*a\) are not allowed \(line 5\)"),
        ("x: &a [*a]\n", r"aliases \(\*a\) are not allowed \(line 4\)"),
        ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 32 levels deep"),
        ("x: [" + ", ".join(["1"] * (MAX_NODES + 1)) + "]\n", "more than 10000 values"),
        ("x: .nan\n", r"'\.nan' cannot be represented in JSON: quote it \(line 4\)"),
        ("x: -.inf\n", r"'-\.inf' cannot be represented in JSON"),
        ("x: 1e999\n", "'1e999' cannot be represented in JSON"),
        ("x: " + "9" * 400 + "\n", "is too large for JSON"),
        ("x: !!binary aGVsbG8=\n", "'x' is a bytes, which JSON cannot carry"),
        ("x: !!set {a, b}\n", "'x' is a set"),
        ("x: !!int twelve\n", r"'twelve' is not an integer \(line 4\)"),
        ("1: one\n", "the key 1 in the top is not a string: quote it"),
        ("x: [\n", "its frontmatter is refused: "),
        ("x: " + "a" * MAX_FRONTMATTER + "\n", f"at most {MAX_FRONTMATTER} characters"),
    ],
    ids=[
        "bomb",
        "self-alias",
        "nested",
        "values",
        "nan",
        "inf",
        "1e999",
        "long-int",
        "binary",
        "set",
        "tagged-int",
        "int-key",
        "bad",
        "long",
    ],
)
def test_hostile_frontmatter_is_refused_at_once_in_one_line(tmp_path: Path, extra: str, said: str) -> None:
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "SKILL.md").write_text(manifest(extra))
    started = time.perf_counter()
    with pytest.raises(SkillInvalid, match=said) as raised:
        load_skill(folder)
    assert time.perf_counter() - started < 5  # the bomb took 10 s and more, the nesting raised RecursionError
    assert "\n" not in str(raised.value) and str(raised.value).startswith(f"{folder / 'SKILL.md'}: ")


def test_values_are_typed_as_yaml_1_2_reads_them_and_large_integers_as_doubles() -> None:
    frontmatter, body = split(
        manifest("a: yes\nb: 2026-01-02\nc: 017\nd: 0o17\ne: 1e3\nf: ~\ng: 1:20\nh: 123456789012345678901234567890\n")
    )
    assert frontmatter == {
        "name": "hostile",
        "description": "Reads as little as it must",
        "a": "yes",
        "b": "2026-01-02",
        "c": 17,
        "d": 15,
        "e": 1000.0,
        "f": None,
        "g": "1:20",
        "h": 1.2345678901234568e29,
    }
    assert body == "body\n"
    orjson.dumps(frontmatter)  # what skills/list sends: a 100-bit integer broke it for every skill


def test_metadata_must_map_strings_to_strings(tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "SKILL.md").write_text(manifest("metadata:\n  version: 2\n"))
    with pytest.raises(SkillInvalid, match="metadata is not a mapping of strings to strings"):
        load_skill(folder)


# -- properties ------------------------------------------------------------------------------

KEYS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=8)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=20)
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=40
)


def depth(value: Any) -> int:
    if isinstance(value, dict | list):
        return 1 + max(map(depth, value.values() if isinstance(value, dict) else value), default=0)
    return 0


def same(left: Any, right: Any) -> bool:
    """Equal as JSON values (an integer read back as a double, a float's last bit)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, float) or isinstance(right, float):
        return isinstance(left, int | float) and isinstance(right, int | float) and math.isclose(left, right)
    return type(left) is type(right) and left == right


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_yaml_within_the_bounds_reads_back_as_the_json_it_was(value: dict[str, Any]) -> None:
    assume(depth(value) <= MAX_DEPTH)
    for style in (False, True, None):
        text = yaml.dump(value, Dumper=Dumper, default_flow_style=style, allow_unicode=True)
        assert same(load(text), value), text


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), st.integers(1, 3))
def test_any_alias_is_refused(value: dict[str, Any], uses: int) -> None:
    anchored = "base: &base " + yaml.dump(value, Dumper=Dumper, default_flow_style=True, width=1 << 30)
    text = anchored + "".join(f"use{index}: *base\n" for index in range(uses))
    with pytest.raises(YAMLRefused, match=r"aliases \(\*base\) are not allowed"):
        load(text)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.sampled_from(["[", "{a: "]), st.booleans())
def test_nesting_is_read_to_the_bound_and_refused_past_it(levels: int, opener: str, block: bool) -> None:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value] if opener == "[" else {"a": value}
    text = yaml.safe_dump({"x": value}, default_flow_style=not block)
    if depth({"x": value}) <= MAX_DEPTH:
        assert load(text) == {"x": value}
    else:
        with pytest.raises(YAMLRefused, match=f"nested more than {MAX_DEPTH} levels deep"):
            load(text)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_either_read_or_refused_with_the_one_error(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        frontmatter, _ = split(f"---\n{text}\n---\n")
    except FrontmatterInvalid:
        return
    orjson.dumps(frontmatter)
