"""Which engine made the numbers: the embedded SmolLM2-135M default, named once.

The gateway (``Gateway.is_embedded_small_model``) and the reports (``reporting.caption_line``,
``reporting.model_banner``) both need to know whether answers came from the bundled 135M model
(docs/design.md, "Engines": its judgments are close to random, so every output made with it must say
so). The rule lives here, on the floor below both, so that the gateway never imports the
reporting layer (nor pandas) to answer it.
"""
from __future__ import annotations


def is_embedded_small_model(backend: str | None, model: str | None) -> bool:
    """True when the numbers come from the bundled SmolLM2-135M GGUF (or an unnamed llamacpp default)."""
    name = (model or "").lower()
    if "smollm2" in name and "135m" in name:
        return True
    return (backend or "") == "llamacpp" and not name
