"""Tools with Chinese names' descriptions, titles and parameters, nested parameters, and long
descriptions, for the terminal's tables (tests/cli/test_cli_tables.py)."""

from __future__ import annotations

from dataclasses import dataclass

from toolwire import Server

server = Server("宽字符", "1.0.0")


@dataclass
class Item:
    """一件商品。"""

    name: str
    quantity: int = 1


@dataclass
class Address:
    city: str
    street: str | None = None


@server.tool(title="查询天气", read_only=True)
def weather(城市: str, 天数: int = 3) -> str:
    """查询一个城市的天气预报。返回每天的最高和最低气温。

    参数:
        城市: 城市的名字
        天数: 预报几天
    """
    return f"{城市}未来{天数}天：晴"


@server.tool(title="下订单")
def place_order(items: list[Item], address: Address, note: str = "送货上门，谢谢。") -> str:
    """Places an order for the items. Every item is checked against the stock first, then the
    order is confirmed by email and shipped within two days to the address given."""
    return f"{len(items)} 件商品寄往 {address.city}"


@server.tool
def a_tool_with_a_rather_long_name_for_a_narrow_terminal(value: str) -> str:
    """Echo. Nothing more."""
    return value
