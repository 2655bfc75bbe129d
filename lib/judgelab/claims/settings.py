"""The scorecard's knobs per profile: how many simulated runs each power estimate uses (its
Monte-Carlo error is about sqrt(0.8 * 0.2 / n_sim): 0.04 at 100, 0.025 at 250, 0.009 at 2000; the demo keeps 250 so that power at the design's unit, with its bootstrap, fits its time), the largest n
searched, and the seed."""
from __future__ import annotations

from judgelab import profiles

SETTINGS = {
    "smoke": {"power_simulations": 100, "power_n_max": 5000, "power_seed": 2028},
    "demo": {"power_simulations": 250, "power_n_max": 20000, "power_seed": 2028},
    "paper": {"power_simulations": 2000, "power_n_max": 20000, "power_seed": 2028},
}


def scorecard_settings(profile: str) -> dict:
    return profiles.pick(SETTINGS, profile)
