"""Knobs of notebook 10 (cost, out-of-distribution narratives, follow-up analyses), by profile.

Read with ``judgelab.profiles.pick(COST_OOD_PROFILES, PROFILE)``.

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
"""
from __future__ import annotations

from .judge_prompts import MODES
from .judge_settings import JUDGE_PROFILES

COST_OOD_PROFILES: dict[str, dict] = {
    "smoke": {
        "n_cost_pairs": 1, "cost_modes": MODES, "n_ood": 3, "n_perturbed": 3, "ood_modes": ("simple",),
        "k": 2, "vispub_subset": 300, "joint_neighbors": 15, "joint_min_cluster_size": 5,
        "off_topic_quantile": 0.1, "n_splits": 5, "n_estimators": 50,
        "max_tokens": JUDGE_PROFILES["smoke"]["max_tokens"], "reasoning_chars": 40, "seed": 2025,
    },
    "demo": {
        "n_cost_pairs": 5, "cost_modes": MODES, "n_ood": 8, "n_perturbed": 5, "ood_modes": ("simple",),
        "k": None, "vispub_subset": 1200, "joint_neighbors": 16, "joint_min_cluster_size": 6,
        "off_topic_quantile": 0.1, "n_splits": 5, "n_estimators": 200,
        "max_tokens": JUDGE_PROFILES["demo"]["max_tokens"], "reasoning_chars": 300, "seed": 2025,
    },
    "paper": {
        "n_cost_pairs": 30, "cost_modes": MODES, "n_ood": 30, "n_perturbed": 30, "ood_modes": MODES,
        "k": None, "vispub_subset": None, "joint_neighbors": 32, "joint_min_cluster_size": 8,
        "off_topic_quantile": 0.1, "n_splits": 5, "n_estimators": 500,
        "max_tokens": JUDGE_PROFILES["paper"]["max_tokens"], "reasoning_chars": 600, "seed": 2025,
    },
}
