"""The package maps of CONTRIBUTING.md and docs/design.md name the packages and modules that
``lib/judgelab/`` really holds, and nothing that is not there.

CONTRIBUTING.md's map names every package (``name/``) and, in its package's lines, every module
(the gateway's are summed up: it is one door, whose modules change with its inner split);
docs/design.md's shorter shape names every top-level package.
"""
from __future__ import annotations

import re
from pathlib import Path

import judgelab

LIB = Path(judgelab.__file__).resolve().parent
ROOT = LIB.parents[1]
SUMMED_UP = {"gateway"}  # packages whose modules the map describes rather than lists
TOP_HEADER = re.compile(r"^  (\w+)/")  # a top-level package opens its lines in the map


def _block(path: Path, after: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index("```\n", text.index(after)) + 4
    return text[start:text.index("```", start)]


def _packages() -> list[str]:
    return sorted(str(d.relative_to(LIB)) for d in LIB.rglob("*")
                  if d.is_dir() and (d / "__init__.py").exists() and "__pycache__" not in d.parts)


def _modules(package: Path) -> list[str]:
    return sorted(p.stem for p in package.rglob("*.py")
                  if p.stem not in ("__init__", "__main__") and "__pycache__" not in p.parts)


def _sections(block: str) -> dict[str, str]:
    """The map's lines by top-level package ("" = the ground floor, before the first package)."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in block.splitlines()[1:]:  # the first line is "lib/judgelab/"
        m = TOP_HEADER.match(line)
        if m:
            current = m.group(1)
            out.setdefault(current, [])
        out[current].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


CONTRIBUTING_MAP = _block(ROOT / "CONTRIBUTING.md", "## Package")
DESIGN_SHAPE = _block(ROOT / "docs" / "design.md", "The package's shape")


def test_contributing_names_every_package_and_no_other():
    body = CONTRIBUTING_MAP.split("\n", 1)[1]  # after "lib/judgelab/"
    named = set(re.findall(r"(\w+)/", body)) - {"templates"}  # site/templates/ holds no module
    real = {p.split("/")[-1] for p in _packages()}
    assert real - named == set(), f"packages missing from CONTRIBUTING.md's map: {sorted(real - named)}"
    assert named - real == set(), f"CONTRIBUTING.md's map names packages that do not exist: {sorted(named - real)}"


def test_contributing_names_every_module_in_its_package():
    sections = _sections(CONTRIBUTING_MAP)
    top = [p for p in _packages() if "/" not in p]
    assert set(top) <= set(sections), f"no lines for {sorted(set(top) - set(sections))}"
    missing = {}
    for pkg in top:
        if pkg in SUMMED_UP:
            continue
        absent = [m for m in _modules(LIB / pkg) if m not in _words(sections[pkg])]
        if absent:
            missing[pkg] = absent
    floor = [p.stem for p in LIB.glob("*.py") if p.stem != "__init__"]
    absent = [m for m in floor if m not in _words(sections[""])]
    if absent:
        missing["(ground floor)"] = absent
    assert not missing, f"modules missing from CONTRIBUTING.md's map: {missing}"


def test_contributing_lists_only_modules_that_exist_on_the_ground_floor():
    listed = {w for line in _sections(CONTRIBUTING_MAP)[""].splitlines()
              for w in re.findall(r"\w+", line[:57])}  # the left column: module names
    real = {p.stem for p in LIB.glob("*.py")}
    assert listed - real == set(), f"CONTRIBUTING.md's map names ground-floor modules that do not exist: {sorted(listed - real)}"


def test_design_shape_names_every_top_level_package():
    named = set(re.findall(r"^  (\w+)/", DESIGN_SHAPE, re.M))
    real = {p for p in _packages() if "/" not in p}
    assert named == real, f"docs/design.md's shape: missing {sorted(real - named)}, stale {sorted(named - real)}"
