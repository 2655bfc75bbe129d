"""The SAGE notebooks' requests (02-04: L4, L5, L6), built by the code that sends them.

Items come from :mod:`judgelab.sage.protocol.runner` as ``run_layer`` builds them; each evaluation
is played through :func:`judgelab.sage.protocol.evaluation.evaluate` against a
:class:`RecordingGateway` answering with stand-ins (:func:`judgelab.estimate.counting.reply`). So
first-round requests are exact, and the later ones, run once after minimal and once after
schema-capped replies, bound rounds 2-5 and the review. Every reply is assumed to succeed (a real
run can only make fewer calls); repair turns are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from judgelab import config
from judgelab.estimate.counting import TokenCounter, reply
from judgelab.gateway.types import ChatRequest, ChatResult
from judgelab.sage.protocol import leak_check, runner
from judgelab.sage.protocol.evaluation import EvalConfig, evaluate
from judgelab.sage import LAYERS

#: notebook of each layer
NOTEBOOK = {"L4": "02", "L5": "03", "L6": "04"}
#: the requests whose messages do not depend on any earlier reply
FIRST_ROUND = {("evaluator", 1), ("validator_blind", 1)}


@dataclass
class RecordingGateway:
    """Stands in for :class:`judgelab.gateway.Gateway` in ``evaluate``: records each request and
    answers it with the ``size`` stand-in reply. Never calls a model."""

    size: str
    backend_name: str = "estimate"
    model_name: str = "estimate"
    requests: list[ChatRequest] = field(default_factory=list)

    def chat(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        text, parsed = reply(request.schema, self.size)
        return ChatResult(status="ok", parsed=parsed, text=text, backend=self.backend_name,
                          model=self.model_name, tags=dict(request.tags))


def load_corpus() -> pd.DataFrame:
    """Notebook 01's ``corpus.parquet`` when it exists, else the same table from the manifest."""
    from judgelab import interim, paths

    if (paths.interim_dir() / "corpus.parquet").exists():
        return interim.read("corpus")
    from judgelab.corpus import manifest

    return manifest.load_corpus(acquire=False)


def items_for(corpus: pd.DataFrame, layer: str, profile: config.Config | str, counter: TokenCounter, surnames=None,
              stories=None, modes=None, sensitivity: bool = True, per_category: int | None = None):
    """The layer's items for ``profile`` as ``run_layer`` builds them (``per_category``: a sized
    sample), then with ``sensitivity`` the anonymous-author title items 02-04 run next."""
    cfg = config.of(profile).knobs("sage")
    if per_category is not None:
        cfg = {**cfg, "per_category": dict.fromkeys(cfg["per_category"], int(per_category))}
    chosen = runner.select_stories(corpus, cfg["per_category"], cfg["selection_seed"], stories)
    if surnames is None:
        surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    items = runner.build_items(chosen, layer, modes or cfg["modes"], cfg["max_text_tokens"], cfg["context_policy"],
                               mask_title_in_body=bool(cfg.get("mask_title_in_body", True)), surnames=surnames,
                               count_tokens=counter.text_counter())
    if (sensitivity and runner.anonymous_sensitivity_on(cfg.get("anonymous_author_sensitivity"), layer)
            and "title" in (modes or cfg["modes"])):
        # the anonymous-author title run that follows the main one (LayerReport, Table 9's sensitivity)
        anon = chosen[chosen["story_id"].isin(runner.anonymous_stories(chosen, cfg.get("anonymous_per_category")))]
        items += runner.build_items(anon, layer, ["title"], cfg["max_text_tokens"], cfg["context_policy"],
                                    anonymous_author=True, count_tokens=counter.text_counter())
    return items, EvalConfig.from_settings(cfg)


def _messages(req: ChatRequest) -> list[dict]:
    return [{"role": m.role, "content": m.content} for m in req.messages]


def _shared_prefix(a: list[dict], b: list[dict]) -> list[dict]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _common_head(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings (binary search on C-speed slice compares)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """The prompt prefix a provider can serve from its cache: llama.cpp reuses what a request
    shares with the previous prompt only; OpenAI caches earlier prompts' prefixes and serves them
    from 1,024 tokens on, in steps of 128 (its documented rule). Prefixes are found by whole
    messages among all earlier prompts, and within a message against the :data:`RECENT` latest."""

    RECENT = 16

    def __init__(self, counter: TokenCounter):
        self.counter = counter
        self.openai_rules = counter.backend != "llamacpp"
        self.seen: set = set()
        self.recent: list[list[dict]] = []

    @staticmethod
    def _key(msgs: list[dict]) -> tuple:
        return tuple((m["role"], m["content"]) for m in msgs)

    def _shared_tokens(self, msgs: list[dict], k: int, other: list[dict] | None) -> int:
        """Tokens of ``msgs[:k]`` (whole messages) plus the common head of message ``k`` with ``other``'s."""
        n = self.counter.messages(msgs[:k]) - 3 if k else 0  # minus the reply priming of a complete prompt
        if other is not None and k < min(len(msgs), len(other)) and msgs[k]["role"] == other[k]["role"]:
            a = msgs[k]["content"]
            i = _common_head(a, other[k]["content"])
            if i:
                n += self.counter.text(a[:i]) + (0 if k else 3)
        return max(n, 0)

    def served(self, msgs: list[dict]) -> int:
        best = 0
        if self.openai_rules:
            k = next((k for k in range(len(msgs), 0, -1) if self._key(msgs[:k]) in self.seen), 0)
            best = self._shared_tokens(msgs, k, None)
        for other in self.recent:
            best = max(best, self._shared_tokens(msgs, len(_shared_prefix(msgs, other)), other))
        if self.openai_rules:
            return 0 if best < 1024 else (best // 128) * 128
        return best

    def add(self, msgs: list[dict], reply_text: str) -> None:
        if self.openai_rules:
            for k in range(1, len(msgs) + 1):
                self.seen.add(self._key(msgs[:k]))
            self.recent = (self.recent + [msgs])[-self.RECENT:]
        else:
            # the generated reply is in llama.cpp's KV state too, but re-rendered by the chat
            # template it no longer matches token for token: measured reuse stops at the prompt
            self.recent = [msgs]


def evaluation_calls(item, cfg: EvalConfig, counter: TokenCounter, notebook: str | None = None,
                     caches: dict[str, PrefixCache] | None = None) -> list[dict]:
    """One row per request of one evaluation: input tokens after minimal / schema-capped replies,
    their cached part (``caches``: one :class:`PrefixCache` per size for a run), reply sizes."""
    runs = {}
    for size in ("min", "max"):
        gw = RecordingGateway(size)
        evaluate(gw, item, cfg)
        runs[size] = gw.requests
    lo, hi = runs["min"], runs["max"]
    if [r.tags for r in lo] != [r.tags for r in hi]:
        raise RuntimeError(f"SAGE {item.story_id}: the request sequence depends on the replies; the estimate "
                           "cannot bound it (judgelab.estimate.sage)")
    caches = caches or {size: PrefixCache(counter) for size in ("min", "max")}
    rows = []
    for r_lo, r_hi in zip(lo, hi):
        tags = r_lo.tags
        row = {"notebook": notebook or NOTEBOOK[item.layer], "study": "sage", "layer": item.layer, "mode": item.mode,
               "item": item.story_id, "category": item.category, "track": tags["track"], "round": int(tags["round"]),
               "first_round": (tags["track"], int(tags["round"])) in FIRST_ROUND,
               "max_tokens": r_lo.sampling.max_tokens, "reasoning_effort": r_lo.sampling.reasoning_effort}
        for size, req in (("min", r_lo), ("max", r_hi)):
            msgs = _messages(req)
            row[f"input_{size}"] = counter.request(msgs, req.schema)
            text = reply(req.schema, size)[0]
            row[f"cached_{size}"] = caches[size].served(msgs)
            row[f"reply_{size}"] = counter.text(text)
            caches[size].add(msgs, text)
        rows.append(row)
    return rows


def sage_calls(profile: config.Config | str, counter: TokenCounter, layers=LAYERS, corpus: pd.DataFrame | None = None,
               per_category: int | None = None) -> pd.DataFrame:
    """Every request of notebooks 02-04 for ``profile`` (see :func:`evaluation_calls`; ``per_category``:
    :func:`items_for`'s)."""
    corpus = load_corpus() if corpus is None else corpus
    surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    rows, prepared = [], None
    for layer in layers:
        # one notebook per layer, each its own process (llama.cpp starts cold) and hours apart
        caches = {size: PrefixCache(counter) for size in ("min", "max")}
        if prepared is None:
            prepared, cfg = items_for(corpus, layer, profile, counter, surnames, per_category=per_category)
        # the prepared material does not depend on the layer (build_items passes it no layer):
        # prepare the texts once and give each layer its own copy of the items
        items = [replace(it, layer=layer) for it in prepared]
        for item in items:
            rows += evaluation_calls(item, cfg, counter, caches=caches)
    return pd.DataFrame(rows)
