"""Test-wide settings: offline engines, the data mirror beside the project, no network."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("DATA_MIRROR", str((ROOT / ".." / "shared" / "mirror").resolve()))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT / ".cache" / "tiktoken"))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tests never talk to OpenAI: a key in the caller's environment must not leak into a test run.
os.environ.pop("OPENAI_API_KEY", None)
for var in ("JUDGELAB_BACKEND", "JUDGELAB_MODEL", "JUDGELAB_BASE_URL", "JUDGELAB_CACHE_MODE", "OPENAI_BASE_URL"):
    os.environ.pop(var, None)


def pytest_configure(config):
    config.addinivalue_line("markers", "after_notebooks: reads the smoke run's outputs; runs after every other test")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``after_notebooks`` (e.g. the figure-layout check) read what the notebooks' smoke
    run wrote, so they run last, after tests/test_notebooks.py."""
    late = [item for item in items if item.get_closest_marker("after_notebooks")]
    items[:] = [item for item in items if not item.get_closest_marker("after_notebooks")] + late
