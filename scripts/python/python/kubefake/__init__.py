"""kubefake: an in-memory Kubernetes API server for tests.

The wheel ships the ``kubefake`` binary (installed next to the Python interpreter's scripts, as
ruff and uv ship theirs); this module starts ``kubefake serve`` on a free port and hands out its
URL, its kubeconfig and configured ``kubernetes`` clients. The pytest plugin
(``kubefake.pytest_plugin``, registered through the ``pytest11`` entry point) builds its
fixtures on :class:`Kubefake`.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

__all__ = ["Kubefake", "KubefakeError", "find_kubefake_bin"]

StrPath = Union[str, "os.PathLike[str]"]

#: How long ``kubefake serve`` may take to print its URL and kubeconfig lines.
START_TIMEOUT_SECONDS = 30.0
#: How long a stopping server may take before it is killed (it stops in about a second at most).
STOP_TIMEOUT_SECONDS = 5.0


class KubefakeError(RuntimeError):
    """The binary is missing, or ``kubefake serve`` did not become ready."""


def find_kubefake_bin() -> str:
    """The ``kubefake`` binary: ``$KUBEFAKE_BIN``, the one this wheel installed, or ``PATH``'s.

    The wheel puts the binary in the scripts directory of the environment it is installed in,
    which is on ``PATH`` only when that environment is activated; looking there first makes the
    fixture work from an unactivated virtualenv too.
    """
    explicit = os.environ.get("KUBEFAKE_BIN")
    if explicit:
        return explicit
    exe = "kubefake" + (".exe" if sys.platform == "win32" else "")
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        candidates.append(sysconfig.get_path("scripts", scheme=user_scheme))
    for directory in candidates:
        path = Path(directory) / exe
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(exe)
    if found:
        return found
    raise KubefakeError("the kubefake binary was not found: install the kubefake wheel or set KUBEFAKE_BIN")


class Kubefake:
    """A running ``kubefake serve``: HTTPS with a generated CA, RBAC, an admin kubeconfig.

    Use :meth:`start` (or ``with Kubefake.start() as server:``); :meth:`stop` ends the process
    and removes the kubeconfig. ``ready_seconds`` is the time from spawning the process to its
    ready line, CRDs established and objects created.
    """

    def __init__(self, process: subprocess.Popen, workdir: tempfile.TemporaryDirectory,
                 url: str, kubeconfig: str, ready_seconds: float) -> None:
        self._process = process
        self._workdir = workdir
        self.url = url
        self.kubeconfig = kubeconfig
        self.ready_seconds = ready_seconds

    @classmethod
    def start(cls, crds: Iterable[StrPath] = (), objects: Iterable[StrPath] = (),
              args: Sequence[str] = (), binary: Optional[str] = None,
              timeout: float = START_TIMEOUT_SECONDS) -> "Kubefake":
        """Starts ``kubefake serve`` on 127.0.0.1 and a free port; returns once it serves.

        ``crds`` and ``objects`` are YAML/JSON files or directories, loaded before the server
        reports ready (CRDs established); ``args`` are more ``kubefake serve`` flags
        (``["--simulate"]``, ``["--http"]``...).
        """
        workdir = tempfile.TemporaryDirectory(prefix="kubefake-")
        kubeconfig = os.path.join(workdir.name, "kubeconfig")
        command = [binary or find_kubefake_bin(), "serve", "--port", "0", "--kubeconfig", kubeconfig]
        for path in crds:
            command += ["--crds", os.fspath(path)]
        for path in objects:
            command += ["--objects", os.fspath(path)]
        command += list(args)
        stderr_path = os.path.join(workdir.name, "stderr")
        started = time.monotonic()
        with open(stderr_path, "wb") as stderr:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=stderr)
        try:
            lines = _read_ready_lines(process, started + timeout)
        except KubefakeError as error:
            _terminate(process)
            log = Path(stderr_path).read_text(errors="replace")
            workdir.cleanup()
            raise KubefakeError(f"{error}; its stderr:\n{log}") from None
        return cls(process, workdir, lines["KUBEFAKE_URL"], lines["KUBECONFIG"],
                   time.monotonic() - started)

    def api_client(self):
        """A new ``kubernetes.client.ApiClient`` for this server (admin credentials, its CA)."""
        from kubernetes import config

        return config.new_client_from_config(config_file=self.kubeconfig)

    @property
    def stderr(self) -> str:
        """What the server logged so far (``RUST_LOG=debug`` in its environment logs every request)."""
        return Path(self._workdir.name, "stderr").read_text(errors="replace")

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL past a timeout) and removes its files."""
        _terminate(self._process)
        self._workdir.cleanup()

    def __enter__(self) -> "Kubefake":
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Kubefake(url={self.url!r}, kubeconfig={self.kubeconfig!r})"


def _read_ready_lines(process: subprocess.Popen, deadline: float) -> dict:
    """Reads ``KEY=value`` lines from the server's stdout until ``KUBECONFIG=`` arrives."""
    assert process.stdout is not None
    found: dict = {}
    buffer = b""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    try:
        while "KUBECONFIG" not in found:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KubefakeError("kubefake serve did not become ready in time")
            if not selector.select(remaining):
                continue
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                raise KubefakeError(f"kubefake serve exited with status {process.wait()}")
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                key, sep, value = line.decode(errors="replace").strip().partition("=")
                if sep:
                    found[key] = value
    finally:
        selector.close()
    if "KUBEFAKE_URL" not in found:
        raise KubefakeError("kubefake serve did not report its URL")
    return found


def _terminate(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
