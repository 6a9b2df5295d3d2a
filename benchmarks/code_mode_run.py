"""Benchmark code mode against direct calls: model round trips and tokens for five chained calls.

    python benchmarks/code_mode_run.py [--runs N] [--json PATH]

The task: "How much has Ada spent?" over ``tests/servers/orders.py`` (a real server process):
``find_customer`` → ``list_orders`` → ``order_total`` of each of her three orders, five
calls, each needing the one before. The model is the local server of the host's tests, which
speaks the OpenAI Chat Completions HTTP API to the real ``openai`` package, scripted with what
a model would answer:

- **direct, parallel**: one call per answer, but the three totals asked at once (3 tool
  rounds, 4 model requests);
- **direct, one by one**: one call per answer (5 rounds, 6 requests);
- **code mode**: one program that makes the five calls (1 round, 2 requests).

*Input* is what the model reads: the bytes of every request's messages and tools, as the
``openai`` package sent them (each request carries the whole conversation and every tool
definition again). *Output* is what the model writes: the arguments of its calls and its
answer. Tokens are estimated as bytes / 4 (English and JSON; no tokenizer is installed), the
same for all three, so the ratios hold. *Seconds* is the wall time of the turn with an
instant model: the price of code mode is its sandbox's start (a process under bubblewrap).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.model_server import ModelServer, Reply, ToolCall  # noqa: E402
from toolwire.host import ApprovalPolicy, Host  # noqa: E402
from toolwire.host.providers import OpenAIProvider  # noqa: E402

ORDERS = str(ROOT / "tests" / "servers" / "orders.py")
QUESTION = "How much has Ada spent?"
ANSWER = "Ada has spent 49.75 euros over her three orders."
PROGRAM = """customer = await find_customer(name="Ada")
orders = await list_orders(customer_id=customer["customer_id"])
totals = [(await order_total(order_id=order))["total"] for order in orders["order_ids"]]
return sum(totals)"""
TOTALS = [ToolCall("order_total", {"order_id": order}) for order in (101, 102, 103)]
SCRIPTS: dict[str, list[Reply]] = {
    "direct, parallel": [
        Reply(tool_calls=[ToolCall("find_customer", {"name": "Ada"})]),
        Reply(tool_calls=[ToolCall("list_orders", {"customer_id": 7})]),
        Reply(tool_calls=TOTALS),
        Reply(text=ANSWER),
    ],
    "direct, one by one": [
        Reply(tool_calls=[ToolCall("find_customer", {"name": "Ada"})]),
        Reply(tool_calls=[ToolCall("list_orders", {"customer_id": 7})]),
        *(Reply(tool_calls=[call]) for call in TOTALS),
        Reply(text=ANSWER),
    ],
    "code mode": [Reply(tool_calls=[ToolCall("run_code", {"program": PROGRAM})]), Reply(text=ANSWER)],
}


def written(replies: list[Reply]) -> int:
    """Bytes the model writes: its calls' names and arguments, and its text."""
    return sum(len(reply.text.encode()) for reply in replies) + sum(
        len(call.name) + len(call.arguments_json().encode()) for reply in replies for call in reply.tool_calls
    )


async def one_task(mode: str) -> dict[str, Any]:
    with ModelServer(*SCRIPTS[mode]) as model:
        provider = OpenAIProvider("m", api_key="bench", base_url=model.openai_url, max_retries=0)
        policy = ApprovalPolicy(trusted={"orders"})
        code_mode = mode == "code mode"
        async with Host([f"orders={ORDERS}"], provider=provider, policy=policy, code_mode=code_mode) as host:
            conversation = host.conversation()
            started = time.perf_counter()
            async for _event in conversation.send(QUESTION):
                pass
            seconds = time.perf_counter() - started
        assert conversation.text == ANSWER, conversation.messages
        read = sum(len(orjson.dumps({"messages": r["messages"], "tools": r.get("tools")})) for r in model.requests)
        return {
            "mode": mode,
            "requests": len(model.requests),
            "tool_rounds": len(model.requests) - 1,
            "input_bytes": read,
            "output_bytes": written(SCRIPTS[mode]),
            "seconds": seconds,
        }


async def measure(runs: int) -> list[dict[str, Any]]:
    rows = []
    for mode in SCRIPTS:
        samples = [await one_task(mode) for _ in range(runs)]
        row = samples[0] | {"seconds": statistics.median(sample["seconds"] for sample in samples)}
        row["input_tokens"], row["output_tokens"] = row["input_bytes"] // 4, row["output_bytes"] // 4
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    direct = rows[0]
    lines = [
        "| mode | model requests | tool rounds | input tokens (est.) | output tokens (est.) | seconds (median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        change = row["input_tokens"] / direct["input_tokens"] - 1
        lines.append(
            f"| {row['mode']} | {row['requests']} | {row['tool_rounds']} | {row['input_tokens']:,}"
            + (f" ({change:+.0%})" if row is not direct else "")
            + f" | {row['output_tokens']:,} | {row['seconds']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="turns per mode (the time is their median)")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    options = parser.parse_args()
    rows = asyncio.run(measure(options.runs))
    print(table(rows))
    if options.json:
        Path(options.json).write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
