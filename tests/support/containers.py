"""A container engine for the tests of the shipped deployment files (examples/deploy).

``engine()`` uses the Docker engine that answers already, or (as root, with Debian's
``docker.io``) starts one of its own, its images kept under the temporary directory from one
run to the next. ``compose()`` runs Compose: the ``docker compose`` plugin, or the
``docker-compose`` program.

The compose file names three images of Docker Hub: ``python:3.11-slim`` (the replica image's
base), ``redis:7`` and ``haproxy:3.0``. An engine that has them, or can pull them, uses them.
A machine that reaches Debian's mirror but no image registry (as the test machines do) gets
stand-ins under the same names, built here from Debian bookworm (its Python is 3.11), by
``stand_in_images()``: the same programs, started the way the real images start them, and
trusting the certificate authorities this machine trusts (for ``pip`` in the image's build).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: The engine's folder from one test run to the next: its images, so they are built once.
HOME = Path(tempfile.gettempdir()) / "toolwire-test-docker"
DEBIAN_MIRROR = os.environ.get("TOOLWIRE_TEST_DEBIAN_MIRROR", "http://deb.debian.org/debian")
#: Each image of compose.yaml, and the Dockerfile lines of its stand-in over Debian bookworm.
STAND_INS = {
    "python:3.11-slim": [
        "RUN ln -s python3 /usr/bin/python && rm -f /usr/lib/python3.11/EXTERNALLY-MANAGED",
        "ENV PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1",
        'CMD ["python3"]',
    ],
    "redis:7": ['CMD ["redis-server", "--protected-mode", "no"]'],
    "haproxy:3.0": [
        "RUN mkdir -p /usr/local/etc/haproxy",
        'CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]',
    ],
}
BASE = "toolwire-test/bookworm"
PACKAGES = "python3,python3-pip,redis-server,haproxy,ca-certificates"


def run(environment: dict[str, str], *command: str, timeout: float = 600) -> str:
    """``command``'s standard output; ``AssertionError`` with its output if it fails."""
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def succeeds(environment: dict[str, str], *command: str, timeout: float = 120) -> bool:
    """Whether ``command`` exits with status 0 (its output is dropped)."""
    done = subprocess.run(command, env=environment, capture_output=True, timeout=timeout)
    return done.returncode == 0


def _answers(environment: dict[str, str]) -> bool:
    return shutil.which("docker") is not None and succeeds(environment, "docker", "info", timeout=30)


@contextlib.contextmanager
def engine() -> Iterator[dict[str, str]]:
    """The environment to run ``docker`` with, an engine answering it until the block ends.

    The engine this starts is shared by the test runs of this machine (two suites side by
    side): each holds a shared lock on ``HOME/users.lock`` while it uses it; the one that
    finds it not answering starts it, and the last one out (the one that can take the lock
    alone) stops it."""
    environment = dict(os.environ)
    if _answers(environment):
        yield environment
        return
    dockerd = shutil.which("dockerd")
    assert dockerd and shutil.which("docker") and shutil.which("setsid") and os.geteuid() == 0, (
        "these tests need a Docker engine: one running, or Debian's docker.io and root to start one "
        "(scripts/setup.sh installs it when run as root)"
    )
    HOME.mkdir(exist_ok=True)
    environment["DOCKER_HOST"] = f"unix://{HOME / 'docker.sock'}"
    with (HOME / "users.lock").open("w") as users:
        with _alone(HOME / "start.lock"):
            fcntl.flock(users, fcntl.LOCK_SH)
            if not _answers(environment):
                _start_engine(dockerd, environment)
        try:
            yield environment
        finally:
            with _alone(HOME / "start.lock"):
                try:
                    fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    pass  # another run uses it still: the last one stops it
                else:
                    _stop_engine()


@contextlib.contextmanager
def _alone(path: Path) -> Iterator[None]:
    """Holds the exclusive lock on ``path`` (a file made for it) for the block."""
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _start_engine(dockerd: str, environment: dict[str, str]) -> None:
    """Starts ``dockerd`` on ``HOME``, in a session of its own (no test run's child: it may
    outlive the run that started it), and waits until it answers."""
    command = ["setsid", "--fork", dockerd, "--host", environment["DOCKER_HOST"], "--data-root", str(HOME / "data")]
    command += ["--exec-root", str(HOME / "run"), "--pidfile", str(HOME / "docker.pid")]
    with (HOME / "dockerd.log").open("wb") as log:
        subprocess.run(command, stdout=log, stderr=log, check=True)
    deadline = time.monotonic() + 60
    while not _answers(environment):
        assert time.monotonic() < deadline, f"dockerd did not answer within 60 s: see {HOME}/dockerd.log"
        time.sleep(0.2)


def _stop_engine() -> None:
    """Stops the engine ``_start_engine`` started (by its pid file), waiting until it has gone."""
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        pid = int((HOME / "docker.pid").read_text())
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)


def compose(environment: dict[str, str]) -> list[str]:
    """The command that runs Compose with this engine."""
    docker = shutil.which("docker")
    assert docker
    if succeeds(environment, docker, "compose", "version", timeout=30):
        return [docker, "compose"]
    program = shutil.which("docker-compose")
    assert program, "these tests need Compose: the docker compose plugin, or Debian's docker-compose"
    return [program]


def _has(environment: dict[str, str], image: str) -> bool:
    return bool(run(environment, "docker", "image", "ls", "-q", image, timeout=30))


def stand_in_images(environment: dict[str, str]) -> None:
    """Give the engine each image of :data:`STAND_INS` it lacks and cannot pull (see the
    module's docstring); the Debian root file system is made once, with ``debootstrap``."""
    missing = [image for image in STAND_INS if not _has(environment, image)]
    missing = [image for image in missing if not succeeds(environment, "docker", "pull", image)]
    if not missing:
        return
    if not _has(environment, BASE):
        debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
        assert Path(debootstrap).exists(), "these tests need debootstrap (scripts/setup.sh installs it as root)"
        with tempfile.TemporaryDirectory() as root:
            command = [debootstrap, "--variant=minbase", f"--include={PACKAGES}", "bookworm", root, DEBIAN_MIRROR]
            run(environment, *command, timeout=900)
            authorities = Path("/etc/ssl/certs/ca-certificates.crt")
            if authorities.exists():  # this machine's authorities, its own among them
                shutil.copyfile(authorities, Path(root) / authorities.relative_to("/"))
            with subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE) as tar:
                imported = subprocess.run(
                    ["docker", "import", "-", BASE], stdin=tar.stdout, env=environment, capture_output=True
                )
            assert tar.returncode == 0 and imported.returncode == 0, f"docker import failed: {imported.stderr!r}"
    for image in missing:
        dockerfile = "\n".join([f"FROM {BASE}", *STAND_INS[image]]) + "\n"
        done = subprocess.run(
            ["docker", "build", "-q", "-t", image, "-"],
            input=dockerfile,
            text=True,
            env=environment,
            capture_output=True,
            timeout=300,
        )
        assert done.returncode == 0, f"building the stand-in {image} failed:\n{done.stderr}"
