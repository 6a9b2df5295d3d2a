"""The compiled build: setuptools compiles what ``COMPILED`` names with mypyc.

Everything else about the package is in ``pyproject.toml``. The same source files are the
pure-Python package, which is what is installed when they are not compiled:

* ``TOOLWIRE_COMPILE=1`` compiles (an editable install too: its edits then take effect only
  after the next install); a build without a C compiler or mypyc then fails, saying why;
* ``TOOLWIRE_COMPILE=0`` does not;
* unset: a wheel or a plain ``pip install .`` compiles when a C compiler is found, an
  editable install (``pip install -e .``) does not, so that edits take effect at once.

``toolwire --version`` says which build is in use (:mod:`toolwire.build`, whose
``COMPILED`` names what is compiled).
"""

from __future__ import annotations

import os
import runpy
import shlex
import shutil
import sys
import sysconfig

from setuptools import Extension, setup

#: What is compiled (packages whole, and modules): the hot path, named in toolwire/build.py.
COMPILED: tuple[str, ...] = runpy.run_path("src/toolwire/build.py")["COMPILED"]
#: The setuptools commands that build the package (others, such as the metadata that pip asks
#: for first, need no translation to C), and those of them that make an editable install.
BUILDING = frozenset({"bdist_wheel", "build", "build_ext", "install", "editable_wheel", "develop"})
EDITABLE = frozenset({"editable_wheel", "develop"})


def compile_requested(commands: set[str]) -> bool:
    """Whether running ``commands`` compiles; ``SystemExit`` for a ``TOOLWIRE_COMPILE`` that
    is neither ``0`` nor ``1``, or for ``1`` where no C compiler is found."""
    switch = os.environ.get("TOOLWIRE_COMPILE", "")
    if switch not in ("", "0", "1"):
        sys.exit(f"TOOLWIRE_COMPILE must be 0 or 1, not {switch!r}")
    if switch == "0" or not commands & BUILDING:
        return False
    if switch == "1":
        if sys.platform != "win32" and not c_compiler_found():
            sys.exit("TOOLWIRE_COMPILE=1, but the C compiler Python was built with (sysconfig's CC) is not here")
        return True
    return not commands & EDITABLE and c_compiler_found()


def c_compiler_found() -> bool:
    """Whether the C compiler Python was built with (sysconfig's ``CC``) is on this machine;
    false on Windows, whose compiler is not named there (``TOOLWIRE_COMPILE=1`` compiles)."""
    compiler = sysconfig.get_config_var("CC")
    return bool(compiler) and shutil.which(shlex.split(compiler)[0]) is not None


def compiled_extensions() -> list[Extension]:
    """The mypyc extension modules of ``COMPILED`` (translating them to C takes a while)."""
    from mypyc.build import mypycify  # a build requirement (pyproject.toml)

    paths = [path for name in COMPILED for path in _source(name)]
    # mypy's options (pyproject.toml's and these): the rest of toolwire is analysed, so that
    # calls into it compile typed, its errors not reported; the libraries the build does not
    # install (httpx, uvicorn, ...) are typed Any. orjson's stubs are there: a build requirement.
    options = ["--follow-imports=silent", "--ignore-missing-imports"]
    # group_name: the runtime they share is the top-level module toolwire__mypyc.
    extensions = list(mypycify([*options, *paths], opt_level="3", group_name="toolwire"))
    fixed = _runtime_fixed()
    for extension in extensions:
        extension.include_dirs.insert(0, fixed)  # searched first: its files stand in for mypyc's
    return extensions


#: mypyc's generators (coroutines included) take ``throw(exception)``, as asyncio's tasks call
#: it, as ``raise exception`` with no traceback: the exception's own is dropped (CPython's
#: ``throw`` keeps it). An exception a worker thread raised, thrown into a compiled coroutine
#: awaiting its future, lost the thread's frames. The fix: ``throw`` keeps the exception's own.
_THROW = (
    "        value = type;\n        type = (PyObject *)Py_TYPE(value);\n",
    "        value = type;\n        type = (PyObject *)Py_TYPE(value);\n"
    "        if (Py_IsNone(traceback)) {  // toolwire's fix: throw(exception) keeps its traceback\n"
    "            PyObject *own = PyException_GetTraceback(value);\n"
    "            if (own != NULL) {\n"
    "                Py_DECREF(own);  // value holds it\n"
    "                traceback = own;\n"
    "            }\n"
    "        }\n",
)


def _runtime_fixed() -> str:
    """A folder holding mypyc's runtime file ``exc_ops.c`` with the fix above, for the compiler
    to find before mypyc's own; exits saying so if this mypyc's file is not the one fixed."""
    from mypyc.build import include_dir

    with open(os.path.join(include_dir(), "exc_ops.c"), encoding="utf-8") as file:
        source = file.read()
    broken, fixed = _THROW
    if source.count(broken) != 1:
        sys.exit(
            "mypyc's exc_ops.c is not the one setup.py fixes (_THROW): check whether this mypyc keeps"
            " the traceback of an exception thrown into a compiled coroutine, and drop or adapt the fix"
        )
    folder = os.path.join("build", "mypyc-runtime-fixed")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "exc_ops.c"), "w", encoding="utf-8") as file:
        file.write(source.replace(broken, fixed))
    return os.path.abspath(folder)


def _source(name: str) -> list[str]:
    """The source of ``name`` (``protocol``, ``server.dispatch``): a package's folder or a module's file."""
    path = "src/toolwire/" + name.replace(".", "/")
    return [path] if os.path.isdir(path) else [f"{path}.py"]


setup(ext_modules=compiled_extensions() if compile_requested(set(sys.argv[1:])) else [])
