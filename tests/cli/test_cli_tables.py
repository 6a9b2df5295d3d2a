"""How ``toolwire tools`` draws other people's servers: names never shortened, descriptions to
their first sentence, nested parameters spelled out, default hints said in words when piped,
task tools marked, Chinese text aligned; and ``toolwire call`` checking arguments before it
sends them. Run as real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.support.clirun import toolwire
from tests.support.httpserve import SERVERS

WIDE = str(SERVERS / "wide.py")
JOBS = str(SERVERS / "jobs.py")
DESCRIPTIONS = str(SERVERS / "descriptions.py")
SEED = str(Path(__file__).resolve().parents[2] / "examples" / "seed_server.py")


@pytest.mark.parametrize("columns", ["80", "160"])
def test_every_row_fits_and_every_name_is_whole(columns: str) -> None:
    done = toolwire("tools", WIDE, COLUMNS=columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= int(columns)  # nothing cropped at the right
    table = [line for line in lines if line.startswith(("│", "┃"))]
    assert len({cell_len(line) for line in table}) == 1  # wide characters counted as two columns
    first_column = "".join(line.split("│")[1].strip() for line in table if line.startswith("│"))
    assert "a_tool_with_a_rather_long_name_for_a_narrow_terminal" in first_column  # folded, never cut
    assert "…" not in first_column
    if columns == "160":
        assert "a_tool_with_a_rather_long_name_for_a_narrow_terminal" in done.stdout


@pytest.mark.parametrize("columns", ["70", "80"])
def test_closing_punctuation_never_starts_a_line_of_a_cell(columns: str) -> None:
    done = toolwire("tools", WIDE, COLUMNS=columns)
    assert done.returncode == 0, done.stderr
    cells = [cell.strip() for line in done.stdout.splitlines() if line.startswith("│") for cell in line.split("│")]
    assert "送货上门" in done.stdout
    assert not [cell for cell in cells if cell.startswith(("。", "，")) or cell == '"'], done.stdout


def test_descriptions_stop_at_their_first_sentence_and_objects_show_their_fields() -> None:
    done = toolwire("tools", WIDE, COLUMNS="200")
    assert "查询一个城市的天气预报。" in done.stdout and "返回每天" not in done.stdout
    assert "Places an order for the items." in done.stdout and "Every item" not in done.stdout
    assert "Echo." in done.stdout and "Nothing more" not in done.stdout
    assert "items*: array[Item{name*: string, quantity: integer}]" in done.stdout
    assert "address*: Address{city*: string, street: string | null}" in done.stdout
    assert "城市*: string" in done.stdout and "天数: integer = 3" in done.stdout


def test_a_description_shows_its_whole_first_sentence_or_ends_with_an_ellipsis() -> None:
    table = toolwire("tools", DESCRIPTIONS, COLUMNS="300")
    assert table.returncode == 0, table.stderr
    rows = {
        line.split("│")[1].strip(): line.split("│")[4].strip()
        for line in table.stdout.splitlines()
        if line.startswith("│") and line.split("│")[1].strip()
    }
    assert (
        rows["wrapped"]
        == "Index the documents of the folder: new and changed files are read, cut into passages and kept."
    )
    assert rows["abbreviated"] == "Convert units, e.g. miles to kilometres, and back."
    assert rows["chinese"] == "把文件夹里的文档编入索引：新的和改过的文件被读入、切成段落并保存。"
    assert rows["unfinished"] == "Look up a word…"  # the description goes on
    endless = rows["endless"]
    assert endless.endswith(" for whichever purpose it…") and len(endless) <= 201  # cut at a word


def test_hints_the_server_did_not_give_are_marked_as_defaults_when_piped() -> None:
    done = toolwire("tools", WIDE, COLUMNS="200")
    assert "destructive (default)" in done.stdout and "open-world (default)" in done.stdout
    assert "read-only (default)" not in done.stdout  # weather said read-only itself


def hints_of(table: str, name: str) -> list[str]:
    """The hints cell of ``name``'s row, line by line."""
    lines = table.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(f"│ {name} "))
    end = next(index for index in range(start, len(lines)) if lines[index].startswith(("├", "└")))
    return [line.split("│")[2].strip() for line in lines[start:end] if line.split("│")[2].strip()]


@pytest.mark.parametrize("protocol", [[], ["--protocol", "2025-11-25"]])
def test_tools_that_run_as_tasks_are_marked(protocol: list[str]) -> None:
    done = toolwire("tools", JOBS, *protocol, COLUMNS="200")
    assert done.returncode == 0, done.stderr
    assert hints_of(done.stdout, "build")[-1] == "task only"
    assert hints_of(done.stdout, "sleep")[-1] == "task"
    assert not any("task" in hint for hint in hints_of(done.stdout, "quick"))


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["calculator", "operation=add", "a=1"], "tool 'calculator': missing b (its parameters: operation*, a*, b*)"),
        (
            ["calculator", "operation=add", "a=1", "bb=2"],
            "tool 'calculator': missing b; unknown 'bb' (its parameters: operation*, a*, b*)",
        ),
    ],
)
def test_call_checks_the_arguments_before_sending_them(words: list[str], said: str) -> None:
    done = toolwire("call", SEED, *words)
    assert done.returncode == 2
    assert done.stderr.strip() == f"toolwire: {said} (see toolwire call -h)"


@pytest.mark.parametrize("era", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_chinese_text_round_trips_unchanged_in_every_era(era: str) -> None:
    done = toolwire("call", WIDE, "weather", "城市=北京", "天数=2", "--protocol", era)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "北京未来2天：晴\n"
    listed = toolwire("tools", WIDE, "--json", "--protocol", era)
    weather = next(tool for tool in json.loads(listed.stdout) if tool["name"] == "weather")
    assert weather["description"] == "查询一个城市的天气预报。返回每天的最高和最低气温。"
    assert weather["inputSchema"]["properties"]["城市"]["description"] == "城市的名字"  # from the 参数: section


def test_counts_are_singular_for_one() -> None:
    from toolwire.terminal.output import counted

    assert [counted(n, "tool") for n in (0, 1, 2)] == ["0 tools", "1 tool", "2 tools"]
