"""Twenty tools listed five to a page, for the tests of cursors."""

from toolwire import Server

server = Server("paged", page_size=5)

for number in range(20):

    def tool(text: str) -> str:
        return text

    server.tool(tool, name=f"tool_{number:02}", description=f"Tool number {number}.")
