"""Coverage of Table 7's importance interval, simulated at the designs it is used at.

Table 7 (the Narrative paper, section 5.8.1) reports a random forest's impurity importances of
minimum coherence, average coherence and path length for predicting the judges' mean score.
:func:`judgelab.narrative.analyses.prediction.bootstrap_importances` gives each a 95% percentile
cluster bootstrap over endpoint pairs, refitting the forest per resample. This script draws
endpoint pairs (a max-capacity and a random path each, sharing the pair's endpoints: a pair effect
on coherence and on the score) from a generator with a known population importance, defined as
the importance of forests fitted on a very large sample from the same generator (``--truth-pairs``),
and counts how often the interval covers it; and, to separate bias from width, how often it covers
the mean importance of forests at the design's own n (``E_n``, the mean over the simulated runs).

    python benchmarks/importance_coverage.py --pairs 4 100 200 --runs 40 --boot 50 --trees 50

Prints one line per design and feature (docs/claims.md, "Intervals valid at their n", quotes a run). The forests here
have fewer trees than the paper profile's (500): the bias comes from the trees' depth at n, not
from their number.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from judgelab.narrative.analyses.prediction import FEATURES, bootstrap_importances, forest_importances
from judgelab.stats.intervals import proportion_ci


def draw_pairs(n_pairs: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, pair): two narratives per endpoint pair (max-capacity: higher, tighter minimum
    coherence; random: lower, wider, one step longer on average), average coherence tracking the
    minimum, score = a linear mix of the three plus a pair effect and noise (R² about 0.5)."""
    a, c = rng.standard_normal(n_pairs), rng.standard_normal(n_pairs)
    X, y = [], []
    for m, (mu, sd) in enumerate([(0.55, 0.03), (0.40, 0.06)]):
        mn = mu + 0.04 * a + sd * rng.standard_normal(n_pairs)
        me = mn + 0.1 + 0.03 * rng.standard_normal(n_pairs)
        ln = 3 + rng.poisson(1.5 + m, n_pairs)
        X.append(np.column_stack([mn, me, ln]))
        y.append(5 + 8 * (mn - 0.5) + 6 * (me - 0.6) - 0.1 * ln + 0.4 * c + 0.8 * rng.standard_normal(n_pairs))
    return np.vstack(X), np.concatenate(y), np.tile(np.arange(n_pairs), 2)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, nargs="+", default=[4, 100, 200])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--boot", type=int, default=50)
    ap.add_argument("--trees", type=int, default=50)
    ap.add_argument("--truth-pairs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.process_time()
    Xt, yt, _ = draw_pairs(args.truth_pairs, rng)
    truth = np.mean([forest_importances(Xt, yt, s, 100) for s in range(2)], axis=0)
    print(f"truth ({2 * args.truth_pairs} narratives): " + ", ".join(f"{f} {v:.3f}" for f, v in zip(FEATURES, truth)))
    for n in args.pairs:
        est, lo, hi = [], [], []
        for r in range(args.runs):
            X, y, pair = draw_pairs(n, rng)
            est.append(forest_importances(X, y, r, args.trees))
            boot = bootstrap_importances(X, y, pair, args.boot, 1000 + r, args.trees)
            lo.append(np.quantile(boot, 0.025, axis=0))
            hi.append(np.quantile(boot, 0.975, axis=0))
        est, lo, hi = map(np.array, (est, lo, hi))
        e_n = est.mean(0)
        for j, f in enumerate(FEATURES):
            k = int(((lo[:, j] <= truth[j]) & (truth[j] <= hi[:, j])).sum())
            k_n = int(((lo[:, j] <= e_n[j]) & (e_n[j] <= hi[:, j])).sum())
            ci, ci_n = proportion_ci(k, args.runs)[1:], proportion_ci(k_n, args.runs)[1:]
            print(f"{n} pairs, {f}: truth {truth[j]:.3f}, E_n {e_n[j]:.3f}, mean width {np.mean(hi[:, j] - lo[:, j]):.3f}; "
                  f"covers truth {k}/{args.runs} = {k / args.runs:.0%} [{ci[0]:.0%}, {ci[1]:.0%}], "
                  f"covers E_n {k_n}/{args.runs} = {k_n / args.runs:.0%} [{ci_n[0]:.0%}, {ci_n[1]:.0%}] (Wilson)")
    print(f"CPU {time.process_time() - t0:.0f} s; runs {args.runs}, B {args.boot}, trees {args.trees}, seed {args.seed}")


if __name__ == "__main__":
    main()
