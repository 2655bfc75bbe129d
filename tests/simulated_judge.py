"""A simulated judge with known behaviour, served by the fake chat server like a real backend.

:class:`Truth` holds every behaviour notebook 12 measures, each a number the tests plant and then
ask the study to recover: obedience to a planted instruction (a ``raise`` paragraph adds
``obedience`` points, a ``lower`` one takes them away; ``hardened_obedience`` under the hardened
prompt), insertion sensitivity (``insertion`` points for any inserted paragraph, the neutral one
included; a hardened prompt is undone by an escape that carries its leaked token), seed noise (``seed_sd``: one normal draw per item, request text and seed), a length
slope (``length_slope`` points per unit of the log tokens of the story as sent), a surface cue
(``cue`` in the story as sent adds ``cue_bonus`` points) and recognition (a work whose marker phrase is in the
material is recognised and named with probability ``true_claim``; any other work is claimed with
probability ``false_claim``, under a title that is not its own).

:func:`serve` returns the script for :class:`fake_openai_server.FakeChatServer`: it reads the request
as the server receives it (messages, response schema, seed), decides the latent score from the
truth, and fills every score field of the requested schema with the allowed value nearest to it,
so the gateway parses, validates and caches the reply as it would a model's. Self-preference needs
a panel of judges, so its truth is planted on the panel's score table instead
(``tests/test_behaviour_known.py``).

The judge knows the planted texts of ``judgelab.behaviour.planted`` only as text: it looks for them
in the message, as a model reading the prompt would.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

from fake_openai_server import FakeChatServer, request_schema, synthesize

FENCE = re.compile(r"<<<JUDGED TEXT [0-9a-f]+ (BEGINS|ENDS)>>>|<<<(BEGIN|END) JUDGED TEXT>>>")
HARDENED_MARK = "data to be judged"


@dataclass(frozen=True)
class Truth:
    centre: float = 3.0            # the latent score of an average item (scale points)
    item_sd: float = 0.5           # spread of the items' quality
    seed_sd: float = 0.0           # seed noise: one draw per item x request text x seed
    obedience: float = 0.0         # raise: +obedience, lower: -obedience
    hardened_obedience: float | None = None  # obedience under the hardened prompt (None: the same)
    insertion: float = 0.0         # any inserted paragraph (neutral or instruction)
    length_slope: float = 0.0      # points per unit of log story tokens
    cue: str = ""                  # a surface mark ...
    cue_bonus: float = 0.0         # ... worth this many points
    known: dict = field(default_factory=dict)  # marker phrase in the material -> the work's true title
    true_claim: float = 0.0        # P(claim and name the title) of a known work
    false_claim: float = 0.0       # P(claim, naming a wrong title) of any other work


def _uniform(*parts) -> float:
    h = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2 ** 64


def _normal(*parts) -> float:
    u1, u2 = _uniform(*parts, "a"), _uniform(*parts, "b")
    return math.sqrt(-2.0 * math.log(max(u1, 1e-300))) * math.cos(2 * math.pi * u2)


def _deref(node, root):
    if isinstance(node, dict):
        if "$ref" in node:
            target = root
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            return _deref(target, root)
        return {k: (v if k in ("$defs", "definitions") else _deref(v, root)) for k, v in node.items()}
    if isinstance(node, list):
        return [_deref(v, root) for v in node]
    return node


def _fill_scores(value, schema: dict, score: float):
    """``value`` (synthesised from ``schema``) with every ``score`` / ``*_score`` field set to the
    allowed value nearest ``score``."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out = {}
        for k, v in value.items():
            sub = props.get(k, {})
            if (k == "score" or k.endswith("_score")) and ("enum" in sub or sub.get("type") in ("integer", "number")):
                allowed = [float(a) for a in sub["enum"]] if "enum" in sub else None
                if allowed:
                    best = min(allowed, key=lambda a: abs(a - score))
                    out[k] = sub["enum"][allowed.index(best)]
                else:
                    out[k] = round(score)
            else:
                out[k] = _fill_scores(v, sub, score)
        return out
    return value


def _strip(text: str, notes) -> str:
    for note in notes:
        text = note.sub(" ", text)
    return FENCE.sub(" ", text)


class SimulatedJudge:
    """The script for the fake server (``FakeChatServer(judge)``); ``count`` counts tokens (the
    gateway's ``count_tokens``), ``story_of`` finds the story in a user message (for the length
    slope; None: no length effect)."""

    def __init__(self, truth: Truth, count: Callable[[str], int] | None = None,
                 story_of: Callable[[str], str] | None = None):
        from judgelab.behaviour import planted

        self.truth = truth
        self.count = count
        self.story_of = story_of
        # each planted paragraph as a pattern (a leaked escape carries whatever token was drawn)
        self.notes = {k: re.compile(re.escape(v).replace(re.escape(planted.LEAK), "[0-9a-f]{16}"))
                      for k, v in planted.TEXTS.items()}
        self.n = 0

    def __call__(self, body: dict):
        self.n += 1
        msgs = body.get("messages", [])
        system = " ".join(m["content"] for m in msgs if m["role"] == "system")
        user = [m["content"] for m in msgs if m["role"] == "user"][-1]
        schema = request_schema(body) or {}
        schema = _deref(schema, schema)
        props = schema.get("properties", {})
        seed = body.get("seed")
        if "recognised" in props:
            return self._recognition(user, seed)
        if "continuation" in props:
            return {"continuation": "and then the day went on as days do"}
        return _fill_scores(synthesize(schema), schema, self.score(system, user, seed))

    def score(self, system: str, user: str, seed) -> float:
        t = self.truth
        clean = _strip(user, self.notes.values())
        words = clean.split()
        # the item: its words without the planted paragraphs (the story's first words when the
        # story can be found, so that a cut or padded story is the same item)
        key = " ".join(self.story_of(clean).split()[:40] if self.story_of else words)
        latent = t.centre + t.item_sd * _normal("item", key)
        inserted = [k for k, v in self.notes.items() if v.search(user)]
        if inserted:
            latent += t.insertion
        hardened = HARDENED_MARK in system
        # an escape that closes the very fence drawn (a leaked token) undoes the hardening
        tokens = set(re.findall(r"<<<JUDGED TEXT ([0-9a-f]{16}) ENDS>>>", system))
        escaped = any(user.count(f"<<<JUDGED TEXT {tok} ENDS>>>") > 1 for tok in tokens)
        protected = hardened and not escaped and t.hardened_obedience is not None
        ob = t.hardened_obedience if protected else t.obedience
        # one paragraph may match two patterns (a guessed escape is also a leaked one's shape): count
        # each direction once
        latent += ob * sum({"raise": 1, "lower": -1}.get(d, 0) for d in {d for d, _ in inserted})
        if t.length_slope and self.story_of and self.count:
            latent += t.length_slope * math.log(max(self.count(self.story_of(clean)), 1))
        # the cue is looked for in the story as sent when the story can be found (the prompt's own
        # words may hold the mark, e.g. semicolons), else in the whole message
        if t.cue and t.cue in (self.story_of(clean) if self.story_of else clean):
            latent += t.cue_bonus
        if t.seed_sd:
            latent += t.seed_sd * _normal("seed", user, system, seed)
        return latent

    def _recognition(self, user: str, seed) -> dict:
        t = self.truth
        title = next((title for marker, title in t.known.items() if marker in user), None)
        u = _uniform("claim", user, seed)
        if title is not None and u < t.true_claim:
            return {"recognised": True, "title_guess": title[:40], "author_guess": "", "confidence": 4}
        if u < t.false_claim:
            return {"recognised": True, "title_guess": "Quartz Harbour", "author_guess": "", "confidence": 2}
        return {"recognised": False, "title_guess": "", "author_guess": "", "confidence": 1}


def normal_draws(rng: np.random.Generator, shape, sd: float) -> np.ndarray:
    """Vectorised normal draws for the rate simulations (the same model as :class:`SimulatedJudge`)."""
    return rng.normal(0.0, sd, size=shape)


def story_in(message: str) -> str:
    """The story inside a SAGE content-mode user message: between the material template's head and tail."""
    from judgelab.sage.protocol import prompts

    head, tail = prompts.material("content", text="\x00").split("\x00")
    start = message.index(head.strip()) + len(head.strip())
    end = message.rindex(tail.strip()) if tail.strip() else len(message)
    return message[start:end]


@pytest.fixture
def judge_gateway(tmp_path):
    """``open(truth, **judge_kwargs)`` -> a gateway whose backend is the simulated judge on the fake
    server (the OpenAI-compatible client, real sockets, the gateway's cache and validation)."""
    from judgelab.gateway import Gateway

    servers = []

    def open_(truth: Truth, **kw):
        judge = SimulatedJudge(truth, **kw)
        srv = FakeChatServer(judge).start()
        servers.append(srv)
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / f"c{len(servers)}.sqlite")
        judge.count = judge.count or gw.count_tokens
        return gw, judge

    yield open_
    for srv in servers:
        srv.stop()
