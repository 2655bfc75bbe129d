"""Test-wide settings: offline engines, the data mirror beside the project, no network; and how the
smoke run of the notebooks is shared when the suite runs on several workers.

``make test`` runs ``pytest -n 2 --dist loadgroup --no-loadscope-reorder`` (pytest-xdist): the
unit tests spread over both workers, and the notebooks run as chains, one chain per connected
group of the notebook dependency graph (01-06 read one another's outputs, 07-10 likewise, 11
stands alone), each chain whole on one worker in number order. All chains write to one output
root shared by the workers (as ``make all`` writes one tree). Tests marked ``after_notebooks``
read that tree; they wait until every notebook collected in the session has finished (a status
file per notebook), whichever worker ran it.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path

import pytest

from judgelab.notebook_files import LATE_NOTEBOOKS

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("DATA_MIRROR", str((ROOT / ".." / "shared" / "mirror").resolve()))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT / ".cache" / "tiktoken"))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tests never talk to OpenAI: a key in the caller's environment must not leak into a test run.
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("JUDGELAB_API_KEY", None)
for var in ("JUDGELAB_BACKEND", "JUDGELAB_MODEL", "JUDGELAB_BASE_URL", "JUDGELAB_CACHE_MODE", "OPENAI_BASE_URL",
            "JUDGELAB_BATCH_FALLBACK",
            "JUDGELAB_CANARY", "JUDGELAB_STOP_AFTER", "JUDGELAB_NARRATIVE_AGENTS",  # judgelab.study_models, gateway.canary
            *(f"JUDGELAB_{s}_{w}" for s in ("SAGE", "NARRATIVE", "HOLISTIC") for w in ("MODEL", "REASONING_EFFORT"))):
    os.environ.pop(var, None)

WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ... under pytest-xdist, else None
if WORKER:
    # Two workers on two cores: one thread each for llama.cpp, torch and BLAS, or every process
    # would start a thread per core and the two would fight (measured 3-10x slower when oversubscribed).
    for var in ("JUDGELAB_LLAMA_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")

NOTEBOOKS_KEY = pytest.StashKey[list]()      # notebook numbers whose smoke test was collected
STATUS_DIR = ".notebook-tests"               # <smoke root>/.notebook-tests/<NN>: "passed" or "failed"
WAIT_FOR_NOTEBOOKS_S = 60 * 60
#: pytest-timeout limits (the default, ``timeout`` in pyproject.toml, is 600 s a test): a notebook's
#: smoke run or a test on the embedded model (marker llm; one SAGE evaluation took over 600 s on a
#: machine shared by eight test runs), and a late test, which first waits up to WAIT_FOR_NOTEBOOKS_S
#: for the notebooks
NOTEBOOK_TIMEOUT_S = 30 * 60
LATE_TIMEOUT_S = WAIT_FOR_NOTEBOOKS_S + 10 * 60


def pytest_configure(config):
    config.addinivalue_line("markers", "after_notebooks: reads the smoke run's outputs; runs after every other test")
    _TIMING.update(start=time.time(), load_start=_load())


# -- the suite's own time, written at the end of every run ------------------------------------------
_TIMING: dict = {"start": time.time(), "load_start": [], "durations": {}, "outcomes": {}}
TIMING_FILE = ROOT / "results" / "test_timing.json"
N_SLOWEST = 10


def _load() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def pytest_runtest_logreport(report):
    """Sum each test's setup, call and teardown time (on the controller, every worker's reports
    arrive here)."""
    timing = _TIMING
    timing["durations"][report.nodeid] = timing["durations"].get(report.nodeid, 0.0) + report.duration
    if report.when == "call" or report.outcome != "passed":
        timing["outcomes"][report.nodeid] = report.outcome


def pytest_sessionfinish(session, exitstatus):
    """``results/test_timing.json``: the run's wall time, load average, counts and its slowest
    tests, so that the suite's budget is in view after every run (not on xdist workers)."""
    if hasattr(session.config, "workerinput"):
        return
    timing = _TIMING
    durations, outcomes = timing["durations"], timing["outcomes"]
    if not durations:
        return
    slowest = sorted(durations.items(), key=lambda kv: -kv[1])[:N_SLOWEST]
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    record = {
        "wall_s": round(time.time() - timing["start"], 1),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(timing["start"])),
        "load_average_start": timing["load_start"], "load_average_end": _load(),
        "cores": os.cpu_count(), "workers": getattr(session.config.option, "numprocesses", None) or 0,
        "exit_status": int(exitstatus), "tests": len(outcomes), "outcomes": counts,
        "test_seconds_total": round(sum(durations.values()), 1),
        "slowest": [{"test": k, "seconds": round(v, 1)} for k, v in slowest],
    }
    try:
        TIMING_FILE.parent.mkdir(parents=True, exist_ok=True)
        TIMING_FILE.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:  # a read-only checkout must not fail the run
        print(f"could not write {TIMING_FILE}: {exc}")


def notebook_number(item) -> str | None:
    """``"07"`` for the smoke test of notebook 07, else None."""
    spec = getattr(item, "callspec", None)
    source = spec.params.get("source") if spec else None
    return source.name[:2] if source is not None and item.get_closest_marker("notebooks") else None


def notebook_chains() -> dict[str, str]:
    """Notebook number -> the first notebook of its connected group in the dependency graph."""
    from judgelab import pipeline

    numbers = [s.name[:2] for s in pipeline.notebook_sources()]
    group = {n: n for n in numbers}

    def find(n):
        while group[n] != n:
            n = group[n]
        return n

    for n in numbers:
        if n in LATE_NOTEBOOKS:  # a notebook that reads both chains' outputs joins none (it runs late)
            continue
        for up in pipeline.upstream(n):
            a, b = sorted((find(n), find(up)))
            group[b] = a
    return {n: find(n) for n in numbers}


def _join_group(item, group: str) -> None:
    """Put ``item`` in xdist group ``group``: the mark, and the ``<nodeid>@<group>`` suffix that the
    loadgroup scheduler reads. xdist (3.8) writes the suffix to ``item._nodeid``, which pytest 9 no
    longer reads (it keeps the id in ``item._id``): the marks alone spread a group over both workers
    (checked with four marked tests: gw0, gw1, gw0, gw1). So the suffix is written here, in whichever
    attribute this pytest reads, and only on xdist workers running ``--dist loadgroup``."""
    item.add_marker(pytest.mark.xdist_group(group))
    if not WORKER or not getattr(item.config.option, "loadgroup", False) or "@" in item.nodeid:
        return
    suffixed = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import NodeId
        item._id = NodeId.parse(suffixed)
    else:  # pytest < 9
        item._nodeid = suffixed


def _longer_timeouts(config, items) -> None:
    """The notebooks' smoke runs, the model's tests and the late tests get more than
    pytest-timeout's default."""
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if item.get_closest_marker("after_notebooks"):
            item.add_marker(pytest.mark.timeout(LATE_TIMEOUT_S))
        elif notebook_number(item) or item.get_closest_marker("llm"):
            item.add_marker(pytest.mark.timeout(NOTEBOOK_TIMEOUT_S))


@pytest.hookimpl(trylast=True)  # after xdist's own hook, which would otherwise suffix a second time
def pytest_collection_modifyitems(config, items):
    """Order the run for two workers, and group what must stay together.

    Tests marked ``after_notebooks`` (the figure-layout check, the site in a browser) read what the
    notebooks' smoke run wrote, so they come last. Under xdist each notebook chain is one group
    (one worker, number order) and the late tests one more. ``make test`` passes
    ``--no-loadscope-reorder``, so xdist hands out groups in this order: the chains first,
    longest first (they are the critical path), then the unit tests to whichever worker is free
    (the model's own first), then the late tests. Joined to the longest chain instead (as
    before), they held that worker idle for 3.4 min waiting for the other chain while the other
    worker ran every unit test."""
    # the notebooks that read both chains' outputs (notebook_files.LATE_NOTEBOOKS: 12, 13) run
    # first among the late tests, once the notebooks they read have a status (test_notebooks.py)
    summary = [item for item in items if notebook_number(item) in LATE_NOTEBOOKS]
    # a late notebook after the late ones it reads (13 reads 14's robustness table): one worker
    # runs them in this order, so 13 before 14 would wait on it until its timeout
    from judgelab import pipeline
    summary.sort(key=lambda item: len(pipeline.upstream(notebook_number(item)) & LATE_NOTEBOOKS))
    late = summary + [item for item in items if item.get_closest_marker("after_notebooks")]
    rest = [item for item in items if not item.get_closest_marker("after_notebooks") and item not in summary]
    _longer_timeouts(config, items)
    numbers = [n for n in map(notebook_number, items) if n]
    config.stash[NOTEBOOKS_KEY] = numbers
    if not numbers:
        items[:] = rest + late
        return
    chains = notebook_chains()
    sizes = {c: list(chains.values()).count(c) for c in set(chains.values())}
    chain_of = {id(item): chains[n] for item in rest if (n := notebook_number(item))}
    notebooks = sorted((item for item in rest if id(item) in chain_of),
                       key=lambda item: (-sizes[chain_of[id(item)]], chain_of[id(item)], notebook_number(item)))
    units = [item for item in rest if id(item) not in chain_of]
    # the model's tests (marker llm, up to 1.5 min each) early, so that none is the last to start
    units.sort(key=lambda item: item.get_closest_marker("llm") is None)
    # the late tests: one group of everything but the teaching exercises first, then each exercise
    # (a notebook run on the copy of the smoke root that the first of them makes for both workers,
    # tests/test_teaching.py) a group of its own, so that whichever worker is free takes the next
    # one and neither waits at the end for the other
    is_teaching = lambda item: item.nodeid.startswith("tests/test_teaching.py")  # noqa: E731
    late = [item for item in late if not is_teaching(item)] + [item for item in late if is_teaching(item)]
    items[:] = notebooks + units + late
    for item in notebooks:
        _join_group(item, f"notebooks-{chain_of[id(item)]}")
    for i, item in enumerate(late):
        _join_group(item, f"after-notebooks-teaching-{i}" if is_teaching(item) else "after-notebooks")


# -- the smoke run's model replies, replayed -----------------------------------------------------------
from record_smoke import COMMAND as RECORD_COMMAND, EMBEDDINGS, REPLAY  # noqa: E402


def load_replay(root: Path) -> Path:
    """The committed replay file imported into ``root``'s response cache (once, whichever worker
    comes first; the other waits on the lock); the cache's path."""
    from judgelab.gateway.cache import ResponseCache

    if not REPLAY.exists():
        pytest.fail(f"{REPLAY.relative_to(ROOT)} is missing: record it with `{RECORD_COMMAND}`")
    cache_path = root / "results" / "cache" / "llm_cache.sqlite"
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    with open(root / ".replay.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / ".replay-loaded"
        if not done.exists():
            ResponseCache(cache_path).import_jsonl(REPLAY)
            if EMBEDDINGS.exists():  # a vector it lacks is computed by the live embedder, as in any run
                from judgelab.embeddings import EmbeddingCache

                EmbeddingCache(cache_path.parent / "embeddings.sqlite").import_npz(EMBEDDINGS)
            done.touch()
    return cache_path


@contextlib.contextmanager
def replaying():
    """The notebooks run inside this: the response cache answers every LLM call (replay mode), and
    a request it does not hold fails the notebook with :class:`ReplayMissError`."""
    old = os.environ.get("JUDGELAB_CACHE_MODE")
    os.environ["JUDGELAB_CACHE_MODE"] = "replay"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("JUDGELAB_CACHE_MODE", None)
        else:
            os.environ["JUDGELAB_CACHE_MODE"] = old


def replay_miss_hint(error: BaseException) -> str | None:
    """A failure message naming the re-record command when ``error`` is a replay miss."""
    text = str(error)
    if "ReplayMissError" not in text and "replay mode: no cached response" not in text:
        return None
    return (f"the smoke run made a request that {REPLAY.relative_to(ROOT)} does not hold (a prompt, a schema "
            f"or a smoke setting changed?): re-record it with `{RECORD_COMMAND}` and commit the file.\n"
            + text[-2000:])


@pytest.fixture(scope="session")
def smoke_root(tmp_path_factory):
    """The output root of the session's smoke run, shared by all workers (their base temps' parent),
    its response cache loaded with the committed replay file."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if WORKER else base) / "smoke_outputs"
    (root / STATUS_DIR).mkdir(parents=True, exist_ok=True)
    load_replay(root)
    old = os.environ.get("JUDGELAB_OUTPUT_ROOT")
    os.environ["JUDGELAB_OUTPUT_ROOT"] = str(root)
    yield root
    if old is None:
        os.environ.pop("JUDGELAB_OUTPUT_ROOT", None)
    else:
        os.environ["JUDGELAB_OUTPUT_ROOT"] = old


def record_notebook_status(root: Path, number: str, status: str) -> None:
    (root / STATUS_DIR / number).write_text(status)


def notebook_status(root: Path, number: str) -> str | None:
    f = root / STATUS_DIR / number
    return f.read_text() if f.exists() else None


def wait_for_notebooks(root: Path, numbers) -> dict[str, str]:
    """Wait until each of ``numbers`` has a status (whichever worker runs it); their statuses."""
    deadline = time.monotonic() + WAIT_FOR_NOTEBOOKS_S
    while any(notebook_status(root, n) is None for n in numbers):
        if time.monotonic() > deadline:
            missing = [n for n in numbers if notebook_status(root, n) is None]
            pytest.fail(f"notebooks {', '.join(missing)} did not finish within {WAIT_FOR_NOTEBOOKS_S} s")
        time.sleep(2)
    return {n: notebook_status(root, n) for n in numbers}


@pytest.fixture(autouse=True)
def _after_the_notebooks(request):
    """An ``after_notebooks`` test starts once every notebook collected in this session has a status."""
    numbers = request.config.stash.get(NOTEBOOKS_KEY, [])
    if not numbers or not request.node.get_closest_marker("after_notebooks"):
        return
    wait_for_notebooks(request.getfixturevalue("smoke_root"), numbers)
