"""Run one code block of the docs, as a reader who copied it would: ``python docblock.py FILE``.

Top-level ``await`` and ``async with`` are allowed (the block then runs on an event loop),
as in the docs' client examples. The block runs in the docs' directory's parent (the
repository), with ``examples/`` importable."""

import ast
import asyncio
import sys
import types

path = sys.argv[1]
with open(path, encoding="utf-8") as file:
    source = file.read()
code = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
module = types.ModuleType("docblock")
module.__file__ = path
sys.modules["docblock"] = module
result = eval(code, module.__dict__)
if asyncio.iscoroutine(result):
    asyncio.run(result)
