"""Knobs of notebook 10 (cost, out-of-distribution narratives, follow-up analyses), by profile.

Resolved with the notebook's overrides by :func:`resolve` (papermill's string parameters parsed
with :mod:`judgelab.params`).

- ``n_cost_pairs``: endpoint pairs in the cost sample; each gives a max-capacity and a random
  narrative (paper section 5.6: 30 pairs -> 60 narratives, K = 1, VisPub). The sample is drawn
  from VisPub when notebook 08 extracted VisPub paths, else from the first collection there.
- ``cost_modes``: modes measured (all four in the paper).
- ``n_ood``: narratives of each OOD kind (paper section 5.7: 30 alternating + 30 random mixed).
- ``n_perturbed``: narratives of each perturbation family (shuffled, off-topic), drawn from the
  max-capacity paths with 3 or more documents.
- ``ood_modes``: judge modes for the OOD and perturbed narratives (the paper does not say; all
  four in the paper profile, fewer in the small profiles to save model time); ``k``: agents per
  OOD and perturbed narrative (None = notebook 09's K, so a perturbed narrative is judged by the
  same agents as its original).
- ``vispub_subset``: VisPub documents kept for the joint landscape (about this many, spread over
  time; None = all). ``joint_neighbors`` / ``joint_min_cluster_size``: UMAP neighbours and HDBSCAN
  minimum cluster size of the joint news + VisPub landscape (48 components, cosine, min_dist 0).
- ``off_topic_quantile``: an off-topic replacement is drawn from the candidates whose mean
  coherence to the path lies in this lowest quantile.
- ``n_splits``: cross-validation folds (paper: 5); ``n_estimators``: random-forest trees.
- ``max_tokens``: output budgets per mode (as notebook 09's for the same profile).
- ``seed``: every generator and model is seeded from it.
- ``jsd_base`` (added by :func:`resolve`): the Jensen–Shannon log base of the joint landscape's
  coherence, the same as notebook 07's (:data:`judgelab.narrative.settings.NARR_PROFILES`).
"""
from __future__ import annotations

from judgelab import profiles
from judgelab.narrative.judges.prompts import MODES, check_mode
from judgelab.narrative.judges.settings import JUDGE_PROFILES
from judgelab.params import as_list, as_optional_int, is_unset

COST_OOD_PROFILES: dict[str, dict] = {
    "smoke": {
        "n_cost_pairs": 1, "cost_modes": MODES, "n_ood": 3, "n_perturbed": 3, "ood_modes": ("simple",),
        "k": 2, "vispub_subset": 300, "joint_neighbors": 15, "joint_min_cluster_size": 5,
        "off_topic_quantile": 0.1, "n_splits": 5, "n_estimators": 50,
        "max_tokens": JUDGE_PROFILES["smoke"]["max_tokens"], "reasoning_chars": 40, "seed": 2025,
    },
    "demo": {
        "n_cost_pairs": 2, "cost_modes": MODES, "n_ood": 4, "n_perturbed": 3, "ood_modes": ("simple",),
        "k": None, "vispub_subset": 600, "joint_neighbors": 16, "joint_min_cluster_size": 6,
        "off_topic_quantile": 0.1, "n_splits": 5, "n_estimators": 200,
        "max_tokens": JUDGE_PROFILES["demo"]["max_tokens"], "reasoning_chars": JUDGE_PROFILES["demo"]["reasoning_chars"],
        "seed": 2025,
    },
    "paper": {
        "n_cost_pairs": 30, "cost_modes": MODES, "n_ood": 30, "n_perturbed": 30, "ood_modes": MODES,
        "k": None, "vispub_subset": None, "joint_neighbors": 32, "joint_min_cluster_size": 8,
        "off_topic_quantile": 0.1, "n_splits": 5, "n_estimators": 500,
        "max_tokens": JUDGE_PROFILES["paper"]["max_tokens"], "reasoning_chars": 600, "seed": 2025,
    },
}


def resolve(profile: str, *, n_cost_sample=None, n_ood=None, n_perturbed=None, k=None, ood_modes=None) -> dict:
    """The profile's knobs with notebook 10's overrides applied (None or "default" = the profile's).

    Overrides may arrive as strings from ``python -m judgelab.pipeline -p NAME=VALUE``:
    ``n_cost_sample`` is a number of narratives (two per endpoint pair, so ``n_cost_pairs`` =
    max(1, n // 2)); ``n_ood``, ``n_perturbed`` and ``k`` whole numbers (``n_perturbed`` and ``k``
    also "all": every eligible path / notebook 09's K); ``ood_modes`` a comma-separated list of
    judge modes.
    """
    from judgelab.narrative.settings import NARR_PROFILES, log_base

    knobs = profiles.pick(COST_OOD_PROFILES, profile)
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
    knobs["jsd_base"] = log_base(profiles.pick(NARR_PROFILES, profile)["jsd_base"])
    return knobs


def _positive(value, name: str) -> int:
    n = as_optional_int(value, name=name, all_words=())
    if n is None or n < 1:
        raise ValueError(f"{name}: expected a whole number >= 1, got {value!r}")
    return n
