"""`make nb-05 ARGS="-p NAME VALUE"`: parameters on the command line, and the variant output root
they write to (judgelab.pipeline), plus the Makefile's recipe for them (`make -n`)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from judgelab import pipeline

ROOT = Path(__file__).resolve().parents[1]


def test_both_spellings_of_a_parameter_and_clear_errors():
    assert pipeline.parse_params([["CONVERGENCE_THRESHOLD", "0.1"], ["LAYERS=L4"], ["N_PAIRS", "2"]]) == \
        {"CONVERGENCE_THRESHOLD": 0.1, "LAYERS": "L4", "N_PAIRS": 2}
    assert pipeline.parse_params([["MODES=simple,cot"], ["TEMPORAL", "False"], ["SEED", "None"]]) == \
        {"MODES": "simple,cot", "TEMPORAL": False, "SEED": None}
    assert isinstance(pipeline.parse_params([["N", "2"]])["N"], int)
    with pytest.raises(SystemExit, match="expected -p NAME VALUE or -p NAME=VALUE"):
        pipeline.parse_params([["A", "1", "2"]])
    with pytest.raises(SystemExit, match="not a parameter name"):
        pipeline.parse_params([["2x", "1"]])


def test_the_variant_root_is_named_by_notebook_and_parameters(tmp_path):
    root = pipeline.variant_root(["05"], {"CONVERGENCE_THRESHOLD": "0.1", "AGREEMENT_THRESHOLD": "1"}, tmp_path)
    assert root == tmp_path / "results" / "variants" / "05_AGREEMENT_THRESHOLD=1,CONVERGENCE_THRESHOLD=0.1"
    odd = pipeline.variant_root(["09"], {"MODES": "simple cot/x"}, tmp_path)
    assert odd.name == "09_MODES=simple-cot-x"


def test_a_variant_gets_a_copy_of_the_interim_files_and_a_link_to_the_cache(tmp_path):
    base = tmp_path / "base"
    (base / "results" / "interim").mkdir(parents=True)
    (base / "results" / "interim" / "sage_rows_L4.parquet").write_bytes(b"rows")
    (base / "results" / "cache").mkdir()
    variant = pipeline.variant_root(["05"], {"X": "1"}, base)
    pipeline.seed_variant(variant, base)
    copied = variant / "results" / "interim" / "sage_rows_L4.parquet"
    copied.write_bytes(b"changed by the variant")
    assert (base / "results" / "interim" / "sage_rows_L4.parquet").read_bytes() == b"rows"
    assert (variant / "results" / "cache").resolve() == (base / "results" / "cache").resolve()
    pipeline.seed_variant(variant, base)  # a second run keeps the link


def test_make_passes_args_to_one_notebook_and_keeps_the_dependency_rule_without(tmp_path):
    env = {**os.environ, "JUDGELAB_OUTPUT_ROOT": str(tmp_path)}

    def recipe(*args):
        out = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if "judgelab.pipeline run" in line]

    with_args = recipe("nb-05", "PROFILE=smoke", 'ARGS=-p CONVERGENCE_THRESHOLD 0.1')
    assert len(with_args) == 1 and with_args[0].endswith("run 05 --profile smoke -p CONVERGENCE_THRESHOLD 0.1")
    plain = recipe("nb-05", "PROFILE=smoke")
    assert plain and plain[-1].endswith("run 05 --profile smoke") and len(plain) > 1  # 01-04 first
