"""Wait until no process holds LOCKFILE as apt and dpkg hold theirs (a POSIX ``fcntl`` lock,
which ``flock`` does not see), for at most SECONDS. Exit status 0 once it is free (it is let go
at once, for the command that needs it; a missing file is free), 1 saying so if it is still
held then. scripts/setup.sh runs it before ``apt-get``:

    python scripts/wait-for-lock.py /var/lib/apt/lists/lock 300
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
from types import FrameType


def main(path: str, seconds: int) -> int:
    try:
        descriptor = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"waiting for {path}: another process holds it (up to {seconds} s)", file=sys.stderr, flush=True)
        signal.signal(signal.SIGALRM, _give_up)
        signal.alarm(seconds)
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX)  # blocks until the other process lets it go
        except TimeoutError:
            print(f"{path} is still held after {seconds} s (see: fuser -v {path})", file=sys.stderr)
            return 1
        signal.alarm(0)
    os.close(descriptor)  # lets it go
    return 0


def _give_up(number: int, frame: FrameType | None) -> None:
    raise TimeoutError


if __name__ == "__main__":
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit("usage: wait-for-lock.py LOCKFILE SECONDS")
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
