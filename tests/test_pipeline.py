"""The notebook pipeline's bookkeeping, the profiles and the provenance labels."""
from __future__ import annotations

import re

import pytest

from judgelab import paths, pipeline, profiles, reporting


def test_makefile_and_pipeline_agree_on_what_each_notebook_reads():
    text = (paths.project_root() / "Makefile").read_text()
    make = {m.group(1): m.group(2).split() for m in re.finditer(r"^DEPS_(\d\d) :=[ \t]*(.*)$", text, re.M)}
    assert make == pipeline.DEPENDS


def test_every_notebook_has_a_dependency_entry_and_a_parameters_cell():
    for src in pipeline.notebook_sources():
        assert src.name[:2] in pipeline.DEPENDS, f"{src.name}: add it to pipeline.DEPENDS and the Makefile"
        body = src.read_text()
        assert '# %% tags=["parameters"]' in body, f"{src.name}: no parameters cell"
        assert re.search(r'^PROFILE = "demo"$', body, re.M), f"{src.name}: PROFILE must default to demo"


def test_upstream_is_transitive():
    assert pipeline.upstream("10") == {"07", "08", "09"}
    assert pipeline.upstream("05") == {"01", "02", "03", "04"}


def test_stamps_of_other_profiles_go_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    src = tmp_path / "07_x.py"
    pipeline._mark_done(src, "demo")
    pipeline._mark_done(tmp_path / "08_y.py", "demo")
    pipeline._mark_done(src, "smoke")
    stamps = sorted(p.name for p in (tmp_path / "results" / "executed" / ".stamps").iterdir())
    assert stamps == ["07.smoke"]


def test_unknown_profile_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown PROFILE 'full'; choose one of smoke, demo, paper"):
        profiles.check("full")


def test_small_model_is_labelled_in_captions():
    cap = reporting.provenance("demo", "llamacpp", "SmolLM2-135M-Instruct-Q8_0.gguf")
    assert "EMBEDDED SmolLM2-135M" in cap and "not the papers' findings" in cap
    assert "EMBEDDED" not in reporting.provenance("paper", "openai", "gpt-5-mini")
    assert "Warning" in reporting.model_banner("llamacpp", "smollm2-135m-instruct")
