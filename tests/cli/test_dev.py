"""``toolwire dev``: the inspector page, driven in a real headless Chromium (Debian's, through
Playwright's Python package; no browser is downloaded), against real server processes.
Every test collects the page's errors: there must be none."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.chromium import chromium
from tests.support.httpserve import SERVERS, free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed_server.py")
DEVPAGE = SERVERS / "devpage.py"
APPS = str(ROOT / "examples" / "apps_server.py")


@contextlib.contextmanager
def inspector(target: str, *rest: str) -> Iterator[str]:
    """``toolwire dev TARGET --no-browser`` as a process (``"--", COMMAND...`` for a command);
    yields the page's address."""
    port = free_port()
    command = [sys.executable, "-m", "toolwire", "dev", "--no-browser", "--port", str(port), target, *rest]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
        assert found, line + (process.stderr.read() if process.poll() is not None else "")
        assert re.fullmatch(r".*=[\w-]+", found.group()), line  # a space after it: a terminal's link is the page
        yield found.group()
    finally:
        process.terminate()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


class Page:
    """A Chromium page on the inspector, with the errors it reports."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on("dialog", lambda dialog: self.dialogs.append(dialog.message))

    async def pick(self, tool: str) -> None:
        await self.page.click(f'#tools li[data-name="{tool}"]')
        await self.page.wait_for_selector("#call")


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


async def open_page(browser: Any, url: str) -> Page:
    # The page's CSP forbids eval, which Playwright's own checks use; with it lifted, the
    # hostile-text test shows the page escapes what servers send without the CSP's help.
    page = Page(await browser.new_page(bypass_csp=True))
    await page.page.goto(url)
    await page.page.wait_for_selector("#tools li")
    return page


async def test_the_calculator_form_gives_the_answer_and_annotations_show(browser: Any) -> None:
    with inspector(SEED) as url:
        page = await open_page(browser, url)
        assert await page.page.locator("#tool p").inner_text() == "11 tools: pick one."
        destructive = page.page.locator('#tools li[data-name="delete_file"]')
        await destructive.click()
        assert await page.page.locator("#tool .badge.destructive").inner_text() == "destructive"
        await page.pick("calculator")
        await page.page.select_option('#tool select[name="operation"]', label='"multiply"')
        await page.page.fill('#tool input[name="a"]', "6")
        await page.page.fill('#tool input[name="b"]', "7")
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "42"
        assert "ms" in await page.page.locator("#tool .duration").inner_text()
        assert "null" not in await page.page.locator("#tool .result").inner_text()  # no stderr: nothing shown
        assert page.errors == [], page.errors


async def test_progress_an_image_a_question_and_hostile_text(browser: Any) -> None:
    with inspector(str(DEVPAGE)) as url:
        page = await open_page(browser, url)
        await page.pick("count")
        await page.page.fill('#tool input[name="to"]', "6")
        await page.page.click("#call")
        bar = page.page.locator("#tool progress")
        await bar.wait_for(state="visible")
        first = float(await bar.get_attribute("value") or 0)
        await page.page.wait_for_function(
            f"Number(document.querySelector('#tool progress').value) > {first}"
        )  # the bar moves
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "counted to 6"

        await page.pick("picture")
        await page.page.click("#call")
        image = page.page.locator("#tool .result img")
        await image.wait_for()
        assert (await image.get_attribute("src") or "").startswith("data:image/png;base64,")

        await page.pick("ask_name")
        await page.page.click("#call")
        await page.page.wait_for_selector("#question[open]")
        assert await page.page.locator("#question .message").inner_text() == "What is your name?"
        await page.page.fill('#question input[name="name"]', "Ada")
        await page.page.click("#accept")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "Hello, Ada"

        await page.pick("hostile")
        assert "<img src=x" in await page.page.locator("#tool .description").inner_text()
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == (
            "<script>window.__pwned = 3</script><b>bold?</b>"
        )
        assert await page.page.evaluate("window.__pwned") is None  # shown as text, never run
        assert await page.page.locator("#tool .result b").count() == 0
        assert page.dialogs == [] and page.errors == []


async def test_a_failed_calls_traceback_and_the_servers_output_are_shown(browser: Any) -> None:
    with inspector(str(DEVPAGE)) as url:
        page = await open_page(browser, url)
        await page.pick("divide")
        await page.page.fill('#tool input[name="x"]', "0")
        await page.page.click("#call")
        said = await page.page.locator("#tool .result .server-output pre").inner_text()
        assert said.startswith("dividing 10 by 0") and said.endswith(
            "ZeroDivisionError: integer division or modulo by zero"
        )
        frames = re.findall(r'File "([^"]+)", line \d+, in (\w+)', said)
        assert [function for _, function in frames] == ["divide", "tenth"] and {path for path, _ in frames} == {
            str(DEVPAGE)
        }, said
        await page.page.click('nav button[data-tab="output"]')
        await page.page.wait_for_function("document.querySelector('#output').textContent.includes('dividing 10 by 0')")
        await page.page.click('nav button[data-tab="tools"]')
        await page.pick("divide")
        await page.page.fill('#tool input[name="x"]', "5")
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result .server-output").count() == 0  # only for a failure
        assert page.errors == []


async def test_a_burst_of_progress_ends_hidden_with_its_last_notification_and_traffic_is_structured(
    browser: Any,
) -> None:
    with inspector(str(DEVPAGE)) as url:
        page = await open_page(browser, url)
        await page.pick("burst")
        await page.page.fill('#tool input[name="times"]', "300")
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "300 chunks"
        assert await page.page.locator("#tool progress").is_hidden()
        assert await page.page.locator("#tool .progress-text").inner_text() == (
            "300 progress notifications; the last: 300 / 300 (100%) — chunk 300"
        )

        await page.page.click('nav button[data-tab="traffic"]')
        call = page.page.locator("#traffic li.out").filter(has=page.page.locator(".method", has_text="tools/call"))
        answer = (
            page.page.locator("#traffic li.in")
            .filter(has=page.page.locator(".kind.response"))
            .filter(has=page.page.locator(".method", has_text="tools/call"))
        )
        await answer.wait_for()  # the traffic comes on the event stream, maybe after the answer
        assert await call.count() == 1 and await answer.count() == 1
        assert re.fullmatch(r" \d+ ms", await answer.locator(".ms").inner_text())
        assert await call.locator("details").first.get_attribute("open") is None  # collapsed
        await call.locator("summary").first.click()
        shown = [key for key in await call.locator(".json .key").all_inner_texts() if key]
        assert shown == ["jsonrpc", "id", "method", "params"]  # the top level open, the rest collapsed
        assert "times" in await call.locator(".json .key").all_text_contents()
        await page.page.wait_for_function(
            """[...document.querySelectorAll('#traffic li.in .method')]
                .filter((method) => method.textContent.includes('notifications/progress')).length >= 300"""
        )
        progress = page.page.locator("#traffic li.in .method", has_text="notifications/progress")
        assert await progress.count() == 300
        await page.page.fill("#traffic-filter", "chunk 300")
        visible = await page.page.locator("#traffic > li:not([hidden])").all_inner_texts()
        assert len(visible) == 1 and "notifications/progress" in visible[0], visible
        assert page.errors == []


async def test_an_mcp_apps_view_runs_sandboxed_and_talks_to_the_server(browser: Any) -> None:
    with inspector(str(DEVPAGE)) as url:
        page = await open_page(browser, url)
        await page.pick("show_counter")
        await page.page.fill('#tool input[name="start"]', "3")
        await page.page.click("#call")
        view = page.page.frame_locator("#tool iframe.app-frame").frame_locator("iframe")
        await view.locator("#input").filter(has_text='input: {"start":3}').wait_for()
        await view.locator("#result").filter(has_text="result: started at 3").wait_for()
        await view.locator("#again").click()  # the view calls a tool of the server through the page
        await view.locator("#again-result").filter(has_text="again: counted to 2").wait_for()
        # the view runs on another origin than the page, without same-origin rights
        sandbox = page.page.frame_locator("#tool iframe.app-frame")
        assert await page.page.locator("#tool iframe.app-frame").get_attribute("src") is not None
        assert "localhost" in (await page.page.locator("#tool iframe.app-frame").get_attribute("src") or "")
        assert await sandbox.locator("iframe").get_attribute("sandbox") == "allow-scripts"
        assert page.errors == []


async def test_the_authored_example_view_votes_through_its_app_only_tool(browser: Any) -> None:
    with inspector(APPS) as url:
        page = await open_page(browser, url)
        await page.pick("vote")
        assert await page.page.locator("#tool .badge.app-only").inner_text() == "app only"
        await page.pick("start_poll")
        await page.page.fill('#tool input[name="question"]', "Tea or coffee?")
        add = page.page.locator("#tool button", has_text="+ item")
        await add.click()
        await add.click()
        await page.page.fill('#tool input[name="#1"]', "tea")
        await page.page.fill('#tool input[name="#2"]', "coffee")
        await page.page.click("#call")
        view = page.page.frame_locator("#tool iframe.app-frame").frame_locator("iframe")
        await view.locator("#question").filter(has_text="Tea or coffee?").wait_for()
        tea = view.locator('button[data-option="tea"] .votes')
        assert await tea.inner_text() == "0"
        await view.locator('button[data-option="tea"]').click()  # the view calls vote through the page
        await view.locator("#status").filter(has_text="counted your vote for tea").wait_for()
        await shown_whole(page)  # down to the status line under the buttons
        assert await tea.inner_text() == "1"
        assert await view.locator('button[data-option="coffee"] .votes').inner_text() == "0"
        await page.pick("poll_results")  # the server counted it: the model's tool says so
        await page.page.fill('#tool input[name="question"]', "Tea or coffee?")
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "Tea or coffee? (tea: 1, coffee: 0)"
        assert page.errors == []


async def shown_whole(page: Page) -> None:
    """Wait until the MCP Apps view on the page is shown whole: the view fits its frame in the
    sandbox, and that frame fits the sandbox's own frame, the size the view asked for."""
    fits = "() => document.documentElement.scrollHeight <= window.innerHeight"
    for frame in page.page.frames:
        if frame.parent_frame is not None:  # the sandbox proxy's page, and the view's
            await frame.wait_for_function(fits, timeout=10_000)


async def test_a_view_written_with_the_official_app_sdk_runs_in_the_page(browser: Any) -> None:
    with inspector(str(SERVERS / "sdk_app_view.py")) as url:
        page = await open_page(browser, url)
        await page.pick("greet")
        await page.page.fill('#tool input[name="name"]', "Ada")
        await page.page.click("#call")
        view = page.page.frame_locator("#tool iframe.app-frame").frame_locator("iframe")
        await view.locator("#result").filter(has_text="result: hello Ada").wait_for()
        assert await view.locator("#input").inner_text() == 'input: {"name":"Ada"}'
        assert await view.locator("#host").inner_text() == "host: toolwire dev"
        await view.locator("#double").click()  # App.callServerTool, to the app-only tool
        await view.locator("#doubled").filter(has_text="doubled: 42").wait_for()
        assert page.errors == [], page.errors


async def test_sampling_is_answered_as_the_model(browser: Any) -> None:
    with inspector(str(DEVPAGE)) as url:
        page = await open_page(browser, url)
        await page.pick("haiku")
        await page.page.fill('#tool input[name="topic"]', "tea")
        await page.page.click("#call")
        await page.page.wait_for_selector("#question[open]")
        assert "A haiku about tea" in await page.page.locator("#question pre").inner_text()
        await page.page.fill("#question textarea", "steam rises slowly")
        await page.page.click("#reply")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "the model wrote: steam rises slowly"
        assert page.errors == []


async def test_resources_templates_prompts_and_completion_of_any_server_command(browser: Any) -> None:
    library = str(SERVERS / "library.py")
    with inspector("--", sys.executable, "-m", "toolwire", "run", library) as url:  # a server as a command
        page = await open_page(browser, url)
        await page.page.click('nav button[data-tab="resources"]')
        await page.page.click('#resources li[data-uri="library://readme"]')
        await page.page.wait_for_selector("#resource pre")
        assert "library" in (await page.page.locator("#resource pre").first.inner_text()).lower()
        await page.page.click('#resources li[data-uri="library://books/{id}"]')
        field = page.page.locator('#resource input[name="id"]')
        await field.focus()  # completion: the ids the server suggests
        await page.page.wait_for_function("document.querySelectorAll('#resource datalist option').length > 0")
        await field.fill("1")
        await page.page.click("#read")
        await page.page.wait_for_selector("#resource h2:text('library://books/1')")
        await page.page.click('nav button[data-tab="prompts"]')
        await page.page.click('#prompts li[data-name="recommend"]')
        await page.page.fill('#prompt input[name="genre"]', "poetry")
        await page.page.click("#get")
        await page.page.wait_for_selector("#prompt pre")
        assert "Recommend 1 poetry book(s) for adults." in await page.page.locator("#prompt pre").first.inner_text()
        assert page.errors == []


async def test_an_era_switch_and_a_restart_when_the_file_changes(browser: Any, tmp_path: Path) -> None:
    source = tmp_path / "server.py"
    shutil.copy(DEVPAGE, source)
    with inspector(str(source)) as url:
        page = await open_page(browser, url)
        await page.page.select_option("#era", "2025-11-25")
        await page.page.wait_for_function("document.querySelector('#status').textContent.includes('2025-11-25')")
        source.write_text(
            source.read_text() + '\n\n@server.tool\ndef added_later() -> str:\n    """New."""\n    return "fresh"\n'
        )
        await page.page.wait_for_selector('#tools li[data-name="added_later"]', timeout=15_000)
        assert "2025-11-25" in await page.page.locator("#status").inner_text()  # the era is kept
        await page.pick("added_later")
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "fresh"

        source.write_text(source.read_text() + "\ndef broken(:\n")
        await page.page.wait_for_selector("#failure:not([hidden])", timeout=15_000)
        assert "SyntaxError" in await page.page.locator("#failure-text").inner_text()
        await page.pick("added_later")  # the previous version still serves
        await page.page.click("#call")
        await page.page.wait_for_selector("#tool .result pre")
        assert await page.page.locator("#tool .result pre").first.inner_text() == "fresh"
        assert page.errors == []


async def test_one_tool_is_one_tool(browser: Any, tmp_path: Path) -> None:
    source = tmp_path / "single.py"
    source.write_text(
        'from toolwire import Server\n\nserver = Server("single")\n\n\n@server.tool\ndef only() -> str:\n    return "x"\n'
    )
    with inspector(str(source)) as url:
        page = await open_page(browser, url)
        assert await page.page.locator("#tool p").inner_text() == "1 tool: pick one."
        assert page.errors == []


def test_dev_h_and_the_docs_describe_the_same_options_alike() -> None:
    docs = (ROOT / "docs" / "dev.md").read_text(encoding="utf-8").split("## Options", 1)[1].split("\n## ", 1)[0]
    documented = dict(re.findall(r"^\| `(--[\w-]+)[^`]*` \| (.+) \|$", docs, re.M))
    command = [sys.executable, "-m", "toolwire", "dev", "-h"]
    shown = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "COLUMNS": "400"}, timeout=30)
    options = {word for word in re.findall(r"--[\w-]+", shown.stdout) if word != "--help"}
    assert set(documented) == options, shown.stdout
    for option, said in documented.items():
        assert f"{option} " in shown.stdout and " ".join(said.split()) in " ".join(shown.stdout.split()), option


def test_the_inspector_answers_only_with_its_token_and_its_own_host() -> None:
    with inspector(str(DEVPAGE)) as url:
        base = url.split("?")[0]
        token = url.split("token=")[1]
        assert httpx.get(url).status_code == 200
        assert httpx.get(base).status_code == 403
        assert httpx.post(base + "api/state", headers={"X-Toolwire-Token": "guess"}).status_code == 403
        assert httpx.post(base + "api/state", headers={"X-Toolwire-Token": token}).json()["ok"]["server"]["name"] == (
            "devpage"
        )
        rebinding = httpx.get(url, headers={"Host": "attacker.example"})
        assert rebinding.status_code == 403


def test_the_inspector_works_against_a_url() -> None:
    from tests.support.httpserve import toolwire_http

    with toolwire_http(str(DEVPAGE)) as (server_url, _), inspector(server_url) as url:
        base, token = url.split("?")[0], url.split("token=")[1]
        state = httpx.post(base + "api/state", headers={"X-Toolwire-Token": token}).json()["ok"]
        assert state["server"]["name"] == "devpage" and state["watching"] is None
        answer = httpx.post(
            base + "api/call",
            headers={"X-Toolwire-Token": token},
            json={"name": "count", "arguments": {"to": 1}, "call": "c1"},
            timeout=30,
        ).json()["ok"]
        assert answer["result"]["content"][0]["text"] == "counted to 1"


def test_dev_mistakes_are_one_line() -> None:
    done = subprocess.run([sys.executable, "-m", "toolwire", "dev"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "dev needs a TARGET" in done.stderr
    started = time.monotonic()
    broken = subprocess.run(
        [sys.executable, "-m", "toolwire", "dev", "--no-browser", "--", sys.executable, "-c", "raise SystemExit(3)"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert broken.returncode == 1 and broken.stderr.startswith("toolwire: ") and time.monotonic() - started < 20


def test_the_api_refuses_other_origins_even_with_the_token() -> None:
    with inspector(str(DEVPAGE)) as url:
        base, token = url.split("?")[0], url.split("token=")[1]
        page_origin = base.rstrip("/")
        sandbox_origin = page_origin.replace("127.0.0.1", "localhost")
        with httpx.Client() as http:
            for origin in ("http://attacker.example", sandbox_origin, "null"):
                headers = {"X-Toolwire-Token": token, "Origin": origin}
                assert http.post(base + "api/state", headers=headers).status_code == 403, origin
                events = http.get(f"{base}api/events?token={token}", headers={"Origin": origin})
                assert events.status_code == 403, origin
            state = http.post(base + "api/state", headers={"X-Toolwire-Token": token, "Origin": page_origin})
            assert state.json()["ok"]["server"]["name"] == "devpage"
            # the page is served on its own origin only: on the sandbox's, its requests would be refused
            assert http.get(url.replace("127.0.0.1", "localhost")).status_code == 403


def test_the_page_and_the_sandbox_say_who_may_frame_them() -> None:
    with inspector(str(DEVPAGE)) as url:
        page_origin = url.split("/?")[0]
        page = httpx.get(url)
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        sandbox = httpx.get(page_origin.replace("127.0.0.1", "localhost") + "/sandbox?host=x")
        assert sandbox.status_code == 200
        assert f"frame-ancestors {page_origin}" in sandbox.headers["content-security-policy"]


async def test_another_site_cannot_frame_the_page_or_the_sandbox(browser: Any, tmp_path: Path) -> None:
    with inspector(str(DEVPAGE)) as url:
        sandbox_url = url.split("/?")[0].replace("127.0.0.1", "localhost") + "/sandbox?host=x"
        (tmp_path / "index.html").write_text(f'<iframe src="{url}"></iframe><iframe src="{sandbox_url}"></iframe>')
        port = free_port()  # another local site: a page of another origin on this machine
        command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(tmp_path)]
        site = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, site)
            tab = Page(await browser.new_page())
            await tab.page.goto(f"http://127.0.0.1:{port}/index.html")
            await tab.page.wait_for_timeout(1000)
        finally:
            site.kill()
            site.wait(10)
        assert [frame.url for frame in tab.page.frames[1:]] == ["chrome-error://chromewebdata/"] * 2
        assert sum("frame-ancestors" in error for error in tab.errors) == 2, tab.errors
        # the inspector's own page still frames its sandbox
        own = await open_page(browser, url)
        assert own.errors == []
