"""Batch mode survives a SIGKILL while it polls: the restarted run resumes the recorded batch.

A child process runs two-turn conversations for three items in batch mode, configured only by
the environment (as ``make ... BATCH=1`` does), against the fake server, which keeps every batch
``in_progress`` until the test releases it. The child is killed with SIGKILL while polling and
started again; the server's counters show that nothing was uploaded or created twice.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from judgelab.gateway.cache import BatchJobs
from fake_openai_server import FakeChatServer


@pytest.fixture(autouse=True)
def _no_canary(monkeypatch):
    """These tests count the calls of the path they test (batches, retries, the breaker); the
    canary per request shape that precedes a fan-out is tested in test_gateway_canary.py."""
    monkeypatch.setenv("JUDGELAB_CANARY", "0")

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
#: the longest a test here waits for a poll, a signal or a child (seconds): a deadline, not a timing
WAIT_S = 60

CHILD = """
import json
from pydantic import BaseModel
from judgelab.gateway import ChatRequest, Gateway, Message


class Label(BaseModel):
    label: str

gw = Gateway.from_settings()
assert gw.batch_mode, "JUDGELAB_BATCH=1 did not switch batch mode on"

def conversation(name):
    messages, labels = [], []
    for turn in range(2):
        messages = messages + [Message(role="user", content=f"{name} turn {turn}")]
        res = gw.chat(ChatRequest(messages=messages, schema=Label, tags={"item": name, "turn": turn}))
        labels.append([res.status, res.parsed.label if res.ok else res.error])
        messages = messages + [Message(role="assistant", content=res.text or "")]
    return labels

print(json.dumps(gw.map(conversation, ["a", "b", "c"])), flush=True)
"""

ITEMS = ["a", "b", "c"]


def echo(body):
    return {"label": body["messages"][-1]["content"]}


def child_env(srv, tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGELAB_", "OPENAI_"))}
    env.update(JUDGELAB_BACKEND="openai-compatible", JUDGELAB_BASE_URL=srv.base_url, JUDGELAB_MODEL="fake-model",
               JUDGELAB_CACHE_PATH=str(tmp_path / "cache" / "llm_cache.sqlite"), JUDGELAB_OUTPUT_ROOT=str(tmp_path),
               JUDGELAB_BATCH="1", JUDGELAB_BATCH_POLL_S="0.05", JUDGELAB_PROGRESS="0")
    return env


def start(env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_until(condition, proc: subprocess.Popen, what: str, limit_s: float = 90.0) -> None:
    """Wait for ``condition`` (a hang guard, not a timing assertion); fail early if the child died."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"child exited ({proc.returncode}) before {what}: {proc.stderr.read()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {what} after {limit_s} s")
        time.sleep(0.02)


def test_sigkill_while_polling_resumes_the_batch_without_resubmitting(tmp_path):
    with FakeChatServer(echo) as srv:
        env = child_env(srv, tmp_path)
        srv.hold_batches()
        first = start(env)
        wait_until(lambda: srv.count("batch_poll") >= 3, first, "polling of the first batch")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        assert first.returncode == -signal.SIGKILL
        assert srv.count("/v1/files") == 1 and srv.count("/v1/batches") == 1 and srv.count("batch_line") == 3
        jobs = BatchJobs(tmp_path / "cache" / "llm_cache.sqlite").rows()
        assert [(j["n_requests"], j["status"], j["collected_at"]) for j in jobs] == [(3, "in_progress", None)]

        polls = srv.count("batch_poll")
        second = start(env)
        wait_until(lambda: srv.count("batch_poll") >= polls + 3, second, "polling after the restart")
        assert srv.count("/v1/files") == 1 and srv.count("/v1/batches") == 1  # resumed, not resubmitted
        srv.release_batches()
        out, err = second.communicate(timeout=90)
        assert second.returncode == 0, err
        assert json.loads(out) == [[["ok", f"{n} turn 0"], ["ok", f"{n} turn 1"]] for n in ITEMS]
        assert f"resuming batch {jobs[0]['batch_id']}" in err
        # round 1 created once, round 2 once; every request answered once: the shape's canary ("a
        # turn 0") alone as an ordinary call before the first batch (gateway.canary), the other five
        # in the two batches; the resumed run sent no canary for requests its batch already held
        assert srv.count("/v1/files") == 2 and srv.count("/v1/batches") == 2
        assert srv.count("batch_line") == 5 and srv.n_calls == 1
        done = BatchJobs(tmp_path / "cache" / "llm_cache.sqlite").rows()
        assert [(j["n_requests"], j["status"]) for j in done] == [(3, "completed"), (2, "completed")]
        assert all(j["collected_at"] is not None for j in done)


def test_an_interrupt_while_waiting_returns_at_once_and_a_rerun_resumes(tmp_path):
    """Ctrl-C in a notebook reaches the main thread while a worker thread polls: the wait ends
    (instead of lasting as long as the batch), and the same gateway's rerun resumes the batch.

    The test installs Python's own SIGINT handler first: a background job of a non-interactive
    shell (``nohup make test &``) starts with SIGINT ignored, so the signal would never arrive and
    the held batch would be waited for forever. And it has a deadline: if the interrupt has not
    ended the wait within WAIT_S, the batches are released, the map returns, and the test fails."""
    from pydantic import BaseModel

    from judgelab.gateway import ChatRequest, Gateway, Message

    class Label(BaseModel):
        label: str

    def one(name):
        res = gw.chat(ChatRequest(messages=[Message(role="user", content=name)], schema=Label))
        return res.parsed.label

    interrupted = threading.Event()

    def interrupt_when_polling():
        deadline = time.monotonic() + WAIT_S
        while srv.count("batch_poll") < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)
        if not interrupted.wait(WAIT_S):  # the signal did not end the wait: end it, the test fails
            srv.release_batches()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with FakeChatServer(echo) as srv:
            gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                       cache_path=tmp_path / "c.sqlite", progress=False, batch=True,
                                       batch_poll_s=0.05)
            srv.hold_batches()
            threading.Thread(target=interrupt_when_polling, daemon=True).start()
            try:
                with pytest.raises(KeyboardInterrupt):
                    gw.map(one, ["a", "b"])
            finally:
                interrupted.set()
            assert srv.count("/v1/batches") == 1
            srv.release_batches()
            assert gw.map(one, ["a", "b"]) == ["a", "b"]
            assert srv.count("/v1/batches") == 1 and srv.count("/v1/files") == 1 and srv.n_calls == 0
    finally:
        signal.signal(signal.SIGINT, previous)
