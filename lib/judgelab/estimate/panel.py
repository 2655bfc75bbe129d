"""A judge panel's price: each member's estimate of the panel's notebooks, on that member's judge.

``python -m judgelab.estimate.panel --panel panel.toml --profile paper --notebooks 09``
(``make estimate PANEL=panel.toml NB=09``): :func:`judgelab.estimate.estimate` per member on the
variables its run gets (passed as a mapping: this process's environment is left alone; no key is
read), one row per member and notebook, and the total.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

import pandas as pd

from judgelab import config, panel, paths
from judgelab.estimate import NOTEBOOKS, estimate


def panel_estimate(panel_file, profile: str, notebooks=NOTEBOOKS) -> pd.DataFrame:
    """Every member's per-notebook summary (:attr:`judgelab.estimate.Estimate.summary`) with a
    ``member`` column, then a ``total`` row summed over members and notebooks."""
    members, parts = panel.read_panel(panel_file), []
    parent = config.variables()  # the declared variables, read once
    for m in members:
        env = panel.member_env(dataclasses.replace(m, key_env=None), members, parent)
        # the inputs the member's run is seeded with are the main root's (judgelab.panel.seed_member)
        env["JUDGELAB_OUTPUT_ROOT"] = str(paths.output_root())
        est = estimate(profile, m.backend, m.model, notebooks=tuple(notebooks), environ=env)
        parts.append(est.summary.assign(member=m.name, backend=m.backend))
    table = pd.concat(parts, ignore_index=True)
    total = table.select_dtypes("number").sum(min_count=1).to_frame().T.assign(member="total", notebook="all")
    return pd.concat([table, total], ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m judgelab.estimate.panel", description=__doc__.splitlines()[0])
    ap.add_argument("--panel", required=True)
    ap.add_argument("--profile", default="demo")
    ap.add_argument("--notebooks", default=",".join(NOTEBOOKS), help="comma- or space-separated notebook numbers")
    args = ap.parse_args(argv)
    numbers = [f"{int(n):02d}" for n in args.notebooks.replace(",", " ").split()]
    table = panel_estimate(args.panel, args.profile, numbers)
    out = paths.output_root() / "results" / "estimate" / f"estimate_panel_{args.profile}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    cols = ["member", "notebook", "model", "calls", "usd_standard_typical", "usd_batch_typical", "wall_s_typical"]
    print(table[cols].to_string(index=False))
    print(f"\nwritten: {out} (typical figures; low and high bounds in the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
