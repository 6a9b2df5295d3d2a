"""``toolwire resources``, ``read``, ``prompts`` and ``prompt``, run as real processes against
``tests/servers/library.py``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.clirun import failed, finish, start, toolwire_all
from tests.support.rawclient import RawClient, toolwire_command

SERVERS = Path(__file__).resolve().parents[1] / "servers"
LIBRARY = str(SERVERS / "library.py")
BASIC = str(SERVERS / "basic.py")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # library://logo and the cover prompt's image


def test_tables_name_every_resource_template_and_prompt() -> None:
    resources, prompts, no_resources, no_prompts = toolwire_all(
        ["resources", LIBRARY], ["prompts", LIBRARY], ["resources", BASIC], ["prompts", BASIC]
    )
    assert resources.returncode == 0 and resources.stderr == ""
    assert "library 1.0.0: 5 resources, 2 resource templates (protocol 2026-07-28)" in resources.stdout
    for shown in (
        "library://readme",
        "Read me",  # the title under the name
        "text/markdown",
        "How to use the library.",
        "library://logo",
        "24 B",  # its size
        "library://catalog",
        "library://shelves",
        "library://secret",
        "library://books/{id}",
        "A book's title by its id.",
        "library://search{?genre,year}",
    ):
        assert shown in resources.stdout
    # the resources first, then the templates in a table of their own
    header = resources.stdout.index("┃ resource template")
    assert resources.stdout.index("library://secret") < header < resources.stdout.index("library://books/{id}")
    assert prompts.returncode == 0 and prompts.stderr == ""
    assert "library 1.0.0: 4 prompts (protocol 2026-07-28)" in prompts.stdout
    for shown in (
        "recommend",
        "Recommend a book",
        "genre*: The genre to pick from",  # required
        "audience: Who the books are for",
        "count: How many books",
        "Ask for book recommendations.",
        "cover",
        "Describe a cover.",
        "ask-name",
        "broken",
        "* required",
    ):
        assert shown in prompts.stdout
    # a server without resources or prompts has none (and is not asked for them)
    assert (no_resources.returncode, no_resources.stdout.strip()) == (
        0,
        "stdio-test 1.2.3: no resources, no resource templates (protocol 2026-07-28)",
    )
    assert (no_prompts.returncode, no_prompts.stdout.strip()) == (
        0,
        "stdio-test 1.2.3: no prompts (protocol 2026-07-28)",
    )


def test_json_is_what_the_server_sent() -> None:
    old = ["--protocol", "2025-06-18"]
    resources, prompts, read, prompt = toolwire_all(
        ["resources", LIBRARY, "--json", *old],
        ["prompts", LIBRARY, "--json", *old],
        ["read", LIBRARY, "library://shelves", "--json", *old],
        ["prompt", LIBRARY, "recommend", "genre=poetry", "count=2", "--json", *old],
    )
    with RawClient(toolwire_command(LIBRARY)) as raw:
        raw.initialize("2025-06-18")
        sent = {
            "resources": raw.request("resources/list")["result"]["resources"],
            "resourceTemplates": raw.request("resources/templates/list")["result"]["resourceTemplates"],
            "prompts": raw.request("prompts/list")["result"]["prompts"],
            "read": raw.request("resources/read", {"uri": "library://shelves"})["result"]["contents"],
            "prompt": raw.request("prompts/get", {"name": "recommend", "arguments": {"genre": "poetry", "count": "2"}})[
                "result"
            ],
        }
    for done in (resources, prompts, read, prompt):
        assert done.returncode == 0 and done.stderr == "", done.stderr
    assert json.loads(resources.stdout) == {
        "resources": sent["resources"],
        "resourceTemplates": sent["resourceTemplates"],
    }
    assert json.loads(prompts.stdout) == sent["prompts"]
    assert json.loads(read.stdout) == sent["read"]  # the blob stays base64: nothing saved
    assert json.loads(prompt.stdout) == sent["prompt"]


def test_read_prints_text_and_saves_binary_contents(tmp_path: Path) -> None:
    text, json_text, template, query, logo, logo_elsewhere, several, missing = [
        finish(process)
        for process in [
            start("read", LIBRARY, "library://readme", cwd=tmp_path),
            start("read", LIBRARY, "library://catalog", cwd=tmp_path),
            start("read", LIBRARY, "library://books/2", cwd=tmp_path),
            start("read", LIBRARY, "library://search?genre=poetry&year=1900", cwd=tmp_path),
            start("read", LIBRARY, "library://logo", cwd=tmp_path),
            start("read", LIBRARY, "library://logo", "--out", "images", cwd=tmp_path),
            start("read", "library://shelves", "--out", "shelves", "--", *toolwire_command(LIBRARY), cwd=tmp_path),
            start("read", LIBRARY, "library://books/99", cwd=tmp_path),
        ]
    ]
    assert (text.returncode, text.stdout, text.stderr) == (0, "# The library\nAsk for books by id.\n", "")
    assert (json_text.returncode, json_text.stdout) == (0, '{"books":4}\n')
    assert (template.returncode, template.stdout) == (0, "Emma\n")
    assert (query.returncode, query.stdout) == (0, "genre=poetry year=1900\n")
    # binary contents: saved to a file named after the URI, the extension from the MIME type
    assert (logo.returncode, logo.stdout) == (0, f"saved logo.png (image/png, {len(PNG)} bytes)\n"), logo.stderr
    assert (logo_elsewhere.returncode, logo_elsewhere.stdout) == (
        0,
        f"saved images/logo.png (image/png, {len(PNG)} bytes)\n",
    )
    assert (tmp_path / "logo.png").read_bytes() == (tmp_path / "images" / "logo.png").read_bytes() == PNG
    # several entries: each under a line naming its URI
    assert several.returncode == 0, several.stderr
    assert several.stdout.splitlines() == [
        "resource: library://shelves/1",
        "A-M",
        "resource: library://shelves/2",
        "saved shelves/2.bin (no MIME type, 3 bytes)",
    ]
    assert (tmp_path / "shelves" / "2.bin").read_bytes() == b"N-Z"
    assert failed(missing, 1) == "toolwire: resource not found: library://books/99"


def test_prompt_prints_its_messages_and_saves_images(tmp_path: Path) -> None:
    recommend, cover, missing_argument, unknown, broken, by_command = [
        finish(process)
        for process in [
            start("prompt", LIBRARY, "recommend", "genre=science fiction", "count=2", cwd=tmp_path),
            start("prompt", LIBRARY, "cover", "--out", "covers", cwd=tmp_path),
            start("prompt", LIBRARY, "recommend", "audience=kids", cwd=tmp_path),
            start("prompt", LIBRARY, "recomend", "genre=x", cwd=tmp_path),
            start("prompt", LIBRARY, "broken", cwd=tmp_path),
            start("prompt", "recommend", "genre=poetry", "--", *toolwire_command(LIBRARY), cwd=tmp_path),
        ]
    ]
    assert recommend.returncode == 0 and recommend.stderr == ""
    assert recommend.stdout.splitlines() == [
        "user:",
        "Recommend 2 science fiction book(s) for adults.",  # count=2 sent as the string "2"
        "assistant:",
        "Here are my picks:",
    ]
    assert cover.returncode == 0, cover.stderr
    assert cover.stdout.splitlines() == [
        "user:",
        f"saved covers/cover-1.png (image/png, {len(PNG)} bytes)",
        "user:",
        "What does this cover show?",
    ]
    assert (tmp_path / "covers" / "cover-1.png").read_bytes() == PNG
    assert failed(missing_argument, 1) == (
        "toolwire: Invalid params: prompt 'recommend': missing required argument genre (error -32602)"
    )
    assert failed(unknown, 1) == "toolwire: the server has no prompt named 'recomend': did you mean 'recommend'?"
    assert failed(broken, 1).startswith("toolwire: Internal error: ")
    assert (by_command.returncode, by_command.stdout.splitlines()[1]) == (0, "Recommend 1 poetry book(s) for adults.")


def test_both_protocol_eras() -> None:
    runs = {
        version: toolwire_all(
            ["resources", LIBRARY, "--protocol", version],
            ["read", LIBRARY, "library://nowhere", "--protocol", version],  # -32002, or -32602 from 2026-07-28
            ["prompt", LIBRARY, "recommend", "genre=history", "--protocol", version],
        )
        for version in ("2025-06-18", "2026-07-28")
    }
    for version, (resources, missing, prompt) in runs.items():
        assert f"5 resources, 2 resource templates (protocol {version})" in resources.stdout, resources.stderr
        assert failed(missing, 1) == "toolwire: resource not found: library://nowhere"
        assert (prompt.returncode, prompt.stdout.splitlines()[1]) == (0, "Recommend 1 history book(s) for adults.")


USAGE_ERRORS = [
    (["resources", LIBRARY, "library://readme"], "unexpected 'library://readme': toolwire resources takes one TARGET"),
    (["resources", LIBRARY, "--out", "x"], "unknown option for resources: '--out' (see toolwire resources -h)"),
    (["prompts", LIBRARY, "recommend"], "unexpected 'recommend': toolwire prompts takes one TARGET"),
    (["read", LIBRARY], "the URI of the resource to read is needed"),
    (
        ["read", LIBRARY, "library://readme", "library://logo"],
        "unexpected 'library://logo': toolwire read takes one URI",
    ),
    (["read", LIBRARY, "library://logo", "--json", "{}"], "unexpected '{}': toolwire read takes one URI"),
    (["read", "--"], "a command line is needed after --"),
    (["prompt", LIBRARY], "the name of the prompt to get is needed"),
    (["prompt", LIBRARY, "recommend", "genre"], "expected KEY=VALUE, not 'genre'"),
    (["prompt", LIBRARY, "recommend", "genre=a", "genre=b"], "genre is given twice"),
    (
        ["prompt", "recommend", "--protocol", "1999-01-01", "--", "server"],
        "argument --protocol: '1999-01-01' is not one of",
    ),
    (["prompts", "library.txt"], "'library.txt' is not a TARGET"),
]


def test_usage_errors_exit_2() -> None:
    for (args, message), done in zip(USAGE_ERRORS, toolwire_all(*(args for args, _ in USAGE_ERRORS)), strict=True):
        assert failed(done, 2).startswith(f"toolwire: {message}"), (args, done.stderr)
        assert failed(done, 2).endswith(f" (see toolwire {args[0]} -h)"), (args, done.stderr)


def test_help() -> None:
    overview, read, prompt = toolwire_all(["-h"], ["read", "-h"], ["prompt", "-h"])
    for command in ("resources TARGET", "read TARGET URI", "prompts TARGET", "prompt TARGET NAME [KEY=VALUE ...]"):
        assert f"toolwire {command}" in overview.stdout
    assert read.returncode == 0 and "toolwire read URI [--json] [--out DIR] [options] -- COMMAND" in read.stdout
    assert (
        prompt.returncode == 0 and "toolwire prompt TARGET NAME [KEY=VALUE ...] [--json] [--out DIR]" in prompt.stdout
    )
