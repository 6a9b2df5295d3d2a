"""``python -m toolwire``: the command line."""

from .cli import main

main()
