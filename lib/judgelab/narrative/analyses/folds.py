"""Cross-validation folds over endpoint pairs (paper 002, sections 5.8.1 and 5.9).

The paper does not say how it split its narratives. Here the folds are drawn over endpoint pairs:
both paths of a pair (max capacity and its random twin) fall in the same fold, so a model is
never tested on the random twin of a path it was trained on (scikit-learn ``GroupKFold``
semantics, with the groups shuffled by a fixed seed through ``KFold``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def pair_folds(pair_ids: Sequence, n_splits: int = 5, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold splits over the unique endpoint pairs, returned as (train, test) row indices.

    Rows that share a ``pair_id`` fall in the same fold. ``n_splits`` is reduced to the number of
    unique pairs when there are fewer (at least 2 are needed).
    """
    from sklearn.model_selection import KFold

    pair_ids = np.asarray(pair_ids)
    uniq = np.unique(pair_ids)
    k = min(n_splits, len(uniq))
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 endpoint pairs, got {len(uniq)}")
    folds = []
    for tr, te in KFold(n_splits=k, shuffle=True, random_state=seed).split(uniq):
        folds.append((np.flatnonzero(np.isin(pair_ids, uniq[tr])), np.flatnonzero(np.isin(pair_ids, uniq[te]))))
    return folds
