"""The scorecard's knobs per profile: how many simulated runs each power estimate uses (its
Monte-Carlo error is about sqrt(0.8 * 0.2 / n_sim): 0.04 at 100, 0.018 at 500, 0.009 at 2000), the largest n
searched, and the seed."""
from __future__ import annotations

from judgelab import profiles

SETTINGS = {
    "smoke": {"power_simulations": 100, "power_n_max": 5000, "power_seed": 2028},
    "demo": {"power_simulations": 500, "power_n_max": 20000, "power_seed": 2028},
    "paper": {"power_simulations": 2000, "power_n_max": 20000, "power_seed": 2028},
}


def scorecard_settings(profile: str) -> dict:
    return profiles.pick(SETTINGS, profile)
