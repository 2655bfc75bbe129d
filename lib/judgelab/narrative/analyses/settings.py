"""Notebook 10's knobs (``[<profile>.cost_ood]`` in ``profiles.toml``) with its overrides applied.

Papermill's string parameters are parsed with :mod:`judgelab.params`; :func:`resolve` adds
``jsd_base``, the Jensen-Shannon log base of the joint landscape's coherence, from notebook 07's
``[<profile>.narrative]`` knobs."""
from __future__ import annotations

from judgelab import profiles
from judgelab.narrative.judges.prompts import check_mode
from judgelab.params import as_list, as_optional_int, is_unset

def resolve(profile: str, *, n_cost_sample=None, n_ood=None, n_perturbed=None, k=None, ood_modes=None) -> dict:
    """The profile's knobs with notebook 10's overrides applied (None or "default" = the profile's).

    Overrides may arrive as strings from ``python -m judgelab.pipeline -p NAME=VALUE``:
    ``n_cost_sample`` is a number of narratives (two per endpoint pair, so ``n_cost_pairs`` =
    max(1, n // 2)); ``n_ood``, ``n_perturbed`` and ``k`` whole numbers (``n_perturbed`` and ``k``
    also "all": every eligible path / notebook 09's K); ``ood_modes`` a comma-separated list of
    judge modes.
    """
    from judgelab.narrative.settings import log_base

    knobs = profiles.knobs("cost_ood", profile)
    if not is_unset(n_cost_sample):
        knobs["n_cost_pairs"] = max(1, _positive(n_cost_sample, "N_COST_SAMPLE") // 2)
    if not is_unset(n_ood):
        knobs["n_ood"] = _positive(n_ood, "N_OOD")
    if not is_unset(n_perturbed):
        knobs["n_perturbed"] = as_optional_int(n_perturbed, name="N_PERTURBED")
    if not is_unset(k):
        knobs["k"] = as_optional_int(k, name="K")
        if knobs["k"] is not None and knobs["k"] < 1:
            raise ValueError(f"K: agents per narrative must be >= 1, got {k!r}")
    if not is_unset(ood_modes):
        knobs["ood_modes"] = tuple(check_mode(m) for m in as_list(ood_modes, name="OOD_MODES"))
    knobs["jsd_base"] = log_base(profiles.knobs("narrative", profile)["jsd_base"])
    return knobs


def _positive(value, name: str) -> int:
    n = as_optional_int(value, name=name, all_words=())
    if n is None or n < 1:
        raise ValueError(f"{name}: expected a whole number >= 1, got {value!r}")
    return n
