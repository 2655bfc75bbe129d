"""Serve a GGUF (by default the bundled SmolLM2-135M) with llama-cpp-python's own OpenAI-compatible
server on a free loopback port, to try the ``openai-compatible`` backend against a server nobody
here wrote, without a GPU or a download::

    python -m judgelab.gateway.local_server            # prints the exports, serves until Ctrl-C
    python -m judgelab.gateway.local_server --port 8000 --n_threads 2 --n_ctx 4096

    with LocalLlamaServer(n_threads=1) as srv:         # from Python, as the tests do
        gw = Gateway.from_settings(backend="openai-compatible", model=srv.model_alias, base_url=srv.base_url)

The server (llama-cpp-python 0.3.36, ``tests/test_llama_cpp_server.py``) compiles
``response_format={"type": "json_object", "schema": ...}`` to a grammar and refuses OpenAI's
``json_schema`` form with HTTP 500 (permanent: ``openai_backend.FORM_REJECTED``); it serves one
request at a time, reusing the KV prefix, with no cached-token count; ``/v1/models`` lists the
GGUF's file stem, the name the in-process backend records. Needs ``llama-cpp-python[server]``.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from judgelab.gateway.backends.llamacpp import bundled_gguf, default_threads
from judgelab.gateway.errors import ConfigError

DEFAULT_N_CTX = 4096
HOST = "127.0.0.1"


class ServerStartError(RuntimeError):
    """The server process exited or did not answer in time; the message holds its log's tail."""


def missing_extras() -> str | None:
    """None when ``llama_cpp.server`` can run here, else the import error naming what is missing
    (the app module, not the empty package, imports fastapi and the rest)."""
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError as exc:
        return f"{exc} (install the server extras: pip install 'llama-cpp-python[server]')"
    return None


def free_port(host: str = HOST) -> int:
    """A TCP port that was free on ``host`` a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def answers(url: str, timeout_s: float = 2.0) -> bool:
    """True when ``GET url`` returns HTTP 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return resp.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def _die_with_parent() -> None:
    """In the child (Linux): the kernel SIGTERMs the server when its parent thread dies, so a
    killed run leaves no server holding a core and a port."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalLlamaServer:
    """One ``python -m llama_cpp.server`` child process; a context manager that starts and stops it."""

    def __init__(self, model: str | os.PathLike | None = None, *, port: int | None = None, host: str = HOST,
                 n_threads: int | None = None, n_ctx: int = DEFAULT_N_CTX, model_alias: str | None = None,
                 log_path: str | os.PathLike | None = None, startup_timeout_s: float = 120.0):
        self.model_path = Path(model).expanduser() if model else bundled_gguf()
        if not self.model_path.is_file():
            raise ConfigError(f"GGUF model file not found: {self.model_path}")
        self.host = host
        self.port = port
        self.n_threads = n_threads or default_threads()
        self.n_ctx = int(n_ctx)
        #: the name the server lists and echoes; the file stem, as the in-process backend names it
        self.model_alias = model_alias or self.model_path.stem
        self.log_path = Path(log_path) if log_path else None
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://host:port/v1``), for ``JUDGELAB_BASE_URL``."""
        if self.port is None:
            raise RuntimeError("the server has no port yet: call start() first")
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        """The server's command line (this interpreter, so it runs in the same environment)."""
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                "--model_alias", self.model_alias, "--host", self.host, "--port", str(self.port),
                "--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads),
                "--n_ctx", str(self.n_ctx), "--verbose", "False"]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> "LocalLlamaServer":
        """Start the server and wait until ``/v1/models`` answers; raise ServerStartError if it does not."""
        if self.running:
            return self
        problem = missing_extras()
        if problem:
            raise ServerStartError(f"llama_cpp.server cannot run: {problem}")
        if self.port is None:
            self.port = free_port(self.host)
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="llama_cpp_server_", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self._log = open(self.log_path, "ab")
        # its own session: a Ctrl-C meant for the caller does not hit the server half-way
        self.process = subprocess.Popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=_die_with_parent)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerStartError(f"llama_cpp.server exited with code {self.process.returncode} before "
                                       f"answering at {url}; log {self.log_path}:\n{self.log_tail()}")
            if answers(url):
                return
            time.sleep(0.2)
        raise ServerStartError(f"llama_cpp.server did not answer at {url} within {self.startup_timeout_s:.0f} s; "
                               f"log {self.log_path}:\n{self.log_tail()}")

    def log_tail(self, n_lines: int = 20) -> str:
        """The last lines the server printed (for error messages)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-n_lines:])

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM (uvicorn shuts down cleanly), SIGKILL if it is still there after ``timeout_s``."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout_s)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "LocalLlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m judgelab.gateway.local_server", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="GGUF file (default: the bundled SmolLM2-135M)")
    ap.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    ap.add_argument("--n_threads", type=int, help="llama.cpp threads (default: JUDGELAB_LLAMA_THREADS, else every core)")
    ap.add_argument("--n_ctx", type=int, default=DEFAULT_N_CTX, help=f"context size (default {DEFAULT_N_CTX})")
    args = ap.parse_args(argv)
    srv = LocalLlamaServer(args.model, port=args.port, n_threads=args.n_threads, n_ctx=args.n_ctx)
    with srv:
        print(f"llama_cpp.server serving {srv.model_path.name} (log {srv.log_path})\n"
              f"export JUDGELAB_BACKEND=openai-compatible\n"
              f"export JUDGELAB_BASE_URL={srv.base_url}\n"
              f"export JUDGELAB_MODEL={srv.model_alias}\n"
              f"export JUDGELAB_CONCURRENCY=1   # the server answers one request at a time\n"
              "Ctrl-C stops it.", flush=True)
        try:
            srv.process.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
