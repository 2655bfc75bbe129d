"""Loading and rendering the SAGE L4–L6 prompt templates (``prompts/sage/*.md``).

Templates use ``{{name}}`` slots, filled in one pass (text that is inserted is never scanned
again, so a story containing braces cannot inject slots). A layer file holds ``## key`` sections
and ``### CODE: Name`` dimension entries (see ``prompts/sage/README.md``).

The template version (:func:`template_version`) is ``VERSION`` plus a short hash of every
template file; it is passed to the gateway, whose cache key includes it, so editing a prompt
never serves a stale cached answer.
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from judgelab import paths

_SLOT = re.compile(r"\{\{([a-z0-9_]+)\}\}")

#: What the evaluator reads in each mode, as named in the round prompts.
SOURCE_NAME = {"content": "text", "title": "work and its critical reception"}


class PromptError(ValueError):
    """A template is missing, malformed, or rendered with a slot left unfilled."""


@dataclass(frozen=True)
class Dimension:
    """One dimension of a layer (paper Tables 1–4): code, name and what high and low look like."""

    code: str
    name: str
    what: str
    theory: str
    high: str
    low: str


@dataclass(frozen=True)
class LayerSpec:
    """The layer-specific parts of the prompts, read from ``prompts/sage/layer_<L>.md``."""

    layer: str
    title: str
    focus: str
    short: str
    theory: str
    evidence: str
    boundary: str
    projection: str
    round2: str
    dimensions: tuple[Dimension, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.dimensions)


def template_dir() -> Path:
    """``<project>/prompts/sage``."""
    return paths.prompts_dir() / "sage"


@functools.lru_cache(maxsize=None)
def _read(path: str) -> str:
    p = Path(path)
    if not p.exists():
        raise PromptError(f"prompt template {p} is missing (expected in {template_dir()})")
    return p.read_text(encoding="utf-8").strip()


def load_template(name: str) -> str:
    """The text of ``prompts/sage/<name>.md`` (stripped)."""
    return _read(str(template_dir() / f"{name}.md"))


def template_version(layer: str) -> str:
    """``<VERSION>-<layer>-<sha256[:8] of every template file>`` — enters the cache key."""
    folder = template_dir()
    version = _read(str(folder / "VERSION"))
    h = hashlib.sha256()
    for f in sorted(folder.glob("*.md")):
        if f.name == "README.md":
            continue
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return f"{version}-{layer}-{h.hexdigest()[:8]}"


def render(template: str, **values: object) -> str:
    """Fill every ``{{slot}}`` of ``template`` in one pass; a slot without a value is an error."""
    missing = sorted({m for m in _SLOT.findall(template) if m not in values})
    if missing:
        raise PromptError(f"template slots without a value: {missing}")
    return _SLOT.sub(lambda m: str(values[m.group(1)]), template)


def _sections(text: str, marker: str) -> list[tuple[str, str]]:
    """Split ``text`` at lines starting with ``marker`` (e.g. '## '): [(heading, body)]."""
    out: list[tuple[str, str]] = []
    head, body = None, []
    for line in text.splitlines():
        if line.startswith(marker) and not line.startswith(marker + "#"):
            if head is not None:
                out.append((head, "\n".join(body).strip()))
            head, body = line[len(marker):].strip(), []
        elif head is not None:
            body.append(line)
    if head is not None:
        out.append((head, "\n".join(body).strip()))
    return out


def _dimension(heading: str, body: str) -> Dimension:
    code, _, name = heading.partition(":")
    fields = {}
    for line in body.splitlines():
        key, sep, val = line.partition(":")
        if sep and key.strip() in ("what", "theory", "high", "low"):
            fields[key.strip()] = val.strip()
    lacking = {"what", "theory", "high", "low"} - fields.keys()
    if lacking or not name.strip():
        raise PromptError(f"dimension '{heading}' lacks {sorted(lacking) or 'a name'}")
    return Dimension(code=code.strip(), name=name.strip(), **fields)


@functools.lru_cache(maxsize=None)
def layer_spec(layer: str) -> LayerSpec:
    """Parse ``prompts/sage/layer_<layer>.md`` into a :class:`LayerSpec`."""
    text = load_template(f"layer_{layer}")
    top, _, dims_text = text.partition("\n### ")
    sections = dict(_sections(top, "## "))
    need = ("title", "focus", "short", "theory", "evidence", "boundary", "projection", "round2")
    lacking = [k for k in need if not sections.get(k)]
    if lacking:
        raise PromptError(f"layer_{layer}.md lacks section(s) {lacking}")
    dims = tuple(_dimension(h, b) for h, b in _sections("### " + dims_text, "### "))
    if len(dims) != 4:
        raise PromptError(f"layer_{layer}.md must define 4 dimensions, found {len(dims)}")
    return LayerSpec(layer=layer, dimensions=dims, **{k: sections[k] for k in need})


def dimensions_block(spec: LayerSpec) -> str:
    """The dimension list of the layer block."""
    lines = []
    for d in spec.dimensions:
        lines.append(f"- {d.code}, {d.name}: {d.what} Theory: {d.theory} "
                     f"High: {d.high} Low: {d.low}")
    return "\n".join(lines)


ROLES = ("evaluator", "validator")

#: Message layouts. ``shared-prefix`` (sage-v4): one system message for every layer, mode, role
#: and story (working rules, scale, reply format: no layer in it), then the material, then the
#: task's layer with its description, then the role's block and the turn's instructions — so every
#: call of a run shares the system message, and every track of every layer of one story shares
#: system + material. (sage-v3 described all three layers in the system message: 1,785 tokens
#: before the story where 411 are needed, which every later token attended to.) ``v2``: the role
#: and the one layer in the system message before the material (the sage-v2 order, kept for
#: ``benchmarks/bench_sage.py`` to measure against).
LAYOUTS = ("shared-prefix", "v2")
LAYERS = ("L4", "L5", "L6")


def system_prompt(layers: tuple[str, ...] = ()) -> str:
    """The system message: working rules, scale and rubric, confidence and the reply format. It
    names no mode, role or layer, so it is the same first message in every SAGE conversation;
    ``layers`` appends their descriptions (the ``v2`` layout's one layer)."""
    text = render(load_template("system"), rubric=load_template("rubric"))
    if not layers:
        return text
    return text + "\n\nTHE LAYER\n\n" + "\n\n".join(layer_block(layer) for layer in layers)


def layer_block(layer: str) -> str:
    """A layer's description (``layer_block.md``): title, focus, evidence, boundary, lens,
    theory and the four dimensions."""
    spec = layer_spec(layer)
    return render(load_template("layer_block"), layer_title=spec.title, layer_focus=spec.focus,
                  evidence=spec.evidence, boundary=spec.boundary, projection=spec.projection,
                  theory=spec.theory, dimensions=dimensions_block(spec))


def layer_task(layer: str) -> str:
    """Which layer this conversation assesses and what it covers (``layer_task.md`` with the
    layer's :func:`layer_block`), after the material."""
    spec = layer_spec(layer)
    return render(load_template("layer_task"), layer_title=spec.title, layer_short=spec.short,
                  codes=", ".join(spec.codes), layer_block=layer_block(layer))


def role_block(layer: str, role: str) -> str:
    """The role's instructions (``role_evaluator.md`` / ``role_validator.md``: the paper's
    independent validator has its own)."""
    if role not in ROLES:
        raise PromptError(f"unknown role {role!r}; choose one of {ROLES}")
    spec = layer_spec(layer)
    return render(load_template(f"role_{role}"), layer_title=spec.title, layer_focus=spec.focus,
                  layer_short=spec.short)


def first_turn(layer: str, mode: str, role: str, material_text: str, instructions: str,
               layout: str = "shared-prefix") -> tuple[str, str]:
    """(system, user) of a track's first turn. ``shared-prefix``: the common system message, then
    material, layer task, role block, instructions as paragraphs (the material's tokens are the same
    whatever follows). ``v2``: role and layer in the system message, then material, instructions."""
    _check_mode(mode)
    if layout == "shared-prefix":
        parts = [material_text, layer_task(layer), role_block(layer, role), instructions]
        return system_prompt(), "\n\n".join(parts)
    if layout == "v2":
        system = "\n\n".join([role_block(layer, role), system_prompt((layer,))])
        return system, "\n\n".join([material_text, instructions])
    raise PromptError(f"unknown layout {layout!r}; choose one of {LAYOUTS}")


def _check_mode(mode: str) -> str:
    if mode not in SOURCE_NAME:
        raise PromptError(f"unknown mode {mode!r}; choose 'content' or 'title'")
    return mode


def material(mode: str, *, text: str | None = None, title: str | None = None,
             author: str | None = None) -> str:
    """What the model is given: the (already cleaned) text in content mode; title and author only
    in title mode, each after its mode block (what the mode allows). Each mode refuses the other
    mode's inputs, so they cannot leak by mistake."""
    block = load_template(f"mode_{_check_mode(mode)}")
    if mode == "content":
        if text is None or title is not None or author is not None:
            raise PromptError("content mode takes the text only (no title, no author)")
        return render(load_template("material_content"), mode_block=block, text=text)
    if text is not None or not title:
        raise PromptError("title mode takes title and author only (no text)")
    return render(load_template("material_title"), mode_block=block, title=title,
                  author=author or "an unknown author")


def _common(spec: LayerSpec, mode: str) -> dict[str, str]:
    return {
        "layer_short": spec.short, "codes": ", ".join(spec.codes), "source": SOURCE_NAME[mode],
        "evidence": "a short quotation" if mode == "content" else "a critic, school or reading",
        "boundary": spec.boundary, "round2": spec.round2,
    }


def round_instructions(layer: str, mode: str, rnd: int) -> str:
    """The evaluator's instructions for round ``rnd`` (1–5), without the material."""
    spec = layer_spec(layer)
    values = _common(spec, _check_mode(mode))
    if rnd not in (1, 2, 3, 4, 5):
        raise PromptError(f"round must be 1–5, got {rnd}")
    values["knows_work"] = (
        " Also set knows_work: true only if you actually know this work." if mode == "title" else ""
    )
    return render(load_template(f"round{rnd}"), **values)


def blind_instructions(layer: str, mode: str) -> str:
    """The validator's blind-turn instructions, without the material."""
    return render(load_template("validator_blind"), **_common(layer_spec(layer), _check_mode(mode)))


def validator_review_prompt(layer: str, mode: str, transcript: str) -> str:
    """The validator's second turn: review of the evaluator's five-round transcript."""
    spec = layer_spec(layer)
    return render(load_template("validator_review"), transcript=transcript,
                  **_common(spec, _check_mode(mode)))
