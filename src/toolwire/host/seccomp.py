"""The seccomp filter of code mode's sandbox: no new processes, no sockets, no kernel escapes.

:func:`filter_program` is a classic BPF program in the form ``bwrap --seccomp FD`` loads
(what ``seccomp_export_bpf`` writes). It refuses, with ``EPERM``: ``fork``, ``vfork`` and
``clone`` without ``CLONE_THREAD`` (threads may start, processes may not: a fork bomb fails
at its first fork), ``socket`` (no socket of any family; the event loop's own pair comes
from ``socketpair``), and the calls that reach into the kernel or other processes
(``ptrace``, ``mount``, ``unshare``, ``setns``, ``bpf``, ``perf_event_open``, ``keyctl``,
``add_key``, ``io_uring_setup``), and ``setsid`` and ``setpgid`` (the host kills the
sandbox by its process group); ``clone3`` gets ``ENOSYS`` so that the C library starts
threads with ``clone``, which the filter can read. A system call of another architecture
(an x32 call on x86-64) kills the process. ``None`` on an architecture it does not know.
"""

from __future__ import annotations

import errno
import platform
import struct

_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (the low half of arg 0)
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000

#: Per machine: the audit architecture, and the numbers of the calls refused, clone3 and clone.
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "socket": 41,
            "ptrace": 101,
            "mount": 165,
            "unshare": 272,
            "setns": 308,
            "bpf": 321,
            "perf_event_open": 298,
            "keyctl": 250,
            "add_key": 248,
            "io_uring_setup": 425,
            "setsid": 112,
            "setpgid": 109,
            "clone3": 435,
            "clone": 56,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198,
            "ptrace": 117,
            "mount": 40,
            "unshare": 97,
            "setns": 268,
            "bpf": 280,
            "perf_event_open": 241,
            "keyctl": 219,
            "add_key": 217,
            "io_uring_setup": 425,
            "setsid": 157,
            "setpgid": 154,
            "clone3": 435,
            "clone": 220,
        },
    ),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one's), or ``None`` if it is not known."""
    known = _ARCHES.get(machine or platform.machine())
    if known is None:
        return None
    arch, numbers = known
    program = [_op(_LOAD, _ARCH), _op(_JEQ, arch, 1, 0), _op(_RET, _KILL), _op(_LOAD, _NR)]
    if arch == _ARCHES["x86_64"][0]:
        program += [_op(_JGE, _X32_BIT, 0, 1), _op(_RET, _KILL)]
    refused = {name: number for name, number in numbers.items() if name not in ("clone3", "clone")}
    for number in refused.values():
        program += [_op(_JEQ, number, 0, 1), _op(_RET, _ERRNO | errno.EPERM)]
    program += [_op(_JEQ, numbers["clone3"], 0, 1), _op(_RET, _ERRNO | errno.ENOSYS)]
    program += [
        _op(_JEQ, numbers["clone"], 0, 3),  # not clone: allowed
        _op(_LOAD, _ARG0),
        _op(_JSET, _CLONE_THREAD, 1, 0),  # a thread: allowed
        _op(_RET, _ERRNO | errno.EPERM),
        _op(_RET, _ALLOW),
    ]
    return b"".join(program)
