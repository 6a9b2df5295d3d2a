"""A SQL database server of the search catalog (tests/test_search.py): queries, tables, backups."""

from __future__ import annotations

from toolwire import Server

server = Server("database", "1.0.0")


@server.tool(read_only=True)
def run_query(sql: str, database: str = "main", max_rows: int = 100) -> list[dict[str, object]]:
    """Run a read-only SQL SELECT query and return the rows.

    Args:
        sql: The SELECT statement.
        database: Which database.
        max_rows: Most rows to return.
    """
    return [{"count": 1}]


@server.tool(destructive=True)
def execute_statement(sql: str, database: str = "main") -> str:
    """Execute a SQL statement that changes data: INSERT, UPDATE, DELETE.

    Args:
        sql: The statement.
        database: Which database.
    """
    return "1 row affected"


@server.tool(read_only=True)
def list_tables(database: str = "main", schema: str = "public") -> list[str]:
    """List the tables of a database schema.

    Args:
        database: Which database.
        schema: Schema name.
    """
    return ["customers", "orders"]


@server.tool(read_only=True)
def describe_table(table: str, database: str = "main") -> list[str]:
    """Show a table's columns, their types, keys and indexes.

    Args:
        table: Table name.
        database: Which database.
    """
    return ["id integer primary key"]


@server.tool(read_only=True)
def explain_query(sql: str, database: str = "main") -> str:
    """Show the query plan of a SQL query, to find why it is slow.

    Args:
        sql: The query.
        database: Which database.
    """
    return "Seq Scan on orders"


@server.tool()
def create_backup(database: str, destination: str) -> str:
    """Dump a whole database to a backup file.

    Args:
        database: Which database.
        destination: Path of the dump.
    """
    return f"backup of {database} written"


@server.tool(destructive=True)
def restore_backup(database: str, source: str) -> str:
    """Restore a database from a backup file, replacing its data.

    Args:
        database: Which database.
        source: Path of the dump.
    """
    return f"restored {database}"


@server.tool(read_only=True)
def database_size(database: str = "main") -> dict[str, int]:
    """Disk space used by a database and by each of its tables.

    Args:
        database: Which database.
    """
    return {"bytes": 1_000_000}
