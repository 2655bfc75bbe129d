"""Transient: the settings file holds exactly the values of the old per-study dicts (deleted next)."""
def test_port():
    from judgelab import profiles
    from judgelab.sage.settings import SAGE_PROFILES, INDEPENDENCE_PROFILES
    from judgelab.narrative.settings import NARR_PROFILES
    from judgelab.narrative.judges.settings import JUDGE_PROFILES
    from judgelab.narrative.analyses.settings import COST_OOD_PROFILES
    from judgelab.human.settings import HUMAN_PROFILES
    from judgelab.behaviour.settings import BEHAVIOUR_PROFILES
    from judgelab.claims.settings import SETTINGS
    from judgelab.sage.layers.features import L123_PROFILES
    from judgelab.sage.analysis.units import BOOTSTRAP_PROFILES
    from judgelab.corpus.surface_cues import SURFACE_CUE_PROFILES
    old = {"sage": SAGE_PROFILES, "independence": INDEPENDENCE_PROFILES, "narrative": NARR_PROFILES,
           "narrative_judges": JUDGE_PROFILES, "cost_ood": COST_OOD_PROFILES, "human": HUMAN_PROFILES,
           "behaviour": BEHAVIOUR_PROFILES, "claims": SETTINGS, "sage_features": L123_PROFILES,
           "sage_bootstrap": {**BOOTSTRAP_PROFILES, "paper": BOOTSTRAP_PROFILES["full"]}, "surface_cues": SURFACE_CUE_PROFILES}
    bad = 0
    for study, table in old.items():
        for p in ("smoke", "demo", "paper"):
            new, _ = profiles.resolved(study, p)
            o = dict(table[p])
            if study == "narrative":
                o.setdefault("investigate_lengths", False)
            def norm(x):  # exact types too
                if isinstance(x, dict): return {k: norm(v) for k, v in x.items()}
                if isinstance(x, (list, tuple)): return (type(x).__name__, tuple(norm(v) for v in x))
                return (type(x).__name__, x)
            if norm(new) != norm(o) or list(new) != list(o):
                bad += 1
                print("DIFF", study, p)
                for k in set(new) | set(o):
                    if norm(new.get(k)) != norm(o.get(k)): print("  ", k, new.get(k), o.get(k))
                if list(new) != list(o): print("  order", list(new), list(o))
    assert bad == 3  # only the narrative key order (collections last) differs
