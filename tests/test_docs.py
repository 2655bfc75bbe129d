"""The pages are true where a reader follows them: every link of the Markdown pages reaches a file
(and its #anchor a heading there), every cited section ("README, "Title"" or
"docs/page.md, "Title"", in the pages, the Makefile and the library) is a heading of that page, and
the two papers are called by their names (SAGE, Narrative), never by their file numbers."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CITED = re.compile(r"""(README(?:\.md)?|docs/[\w-]+\.md),\s+["“]([^"”]+)["”]""")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def headings(page: Path) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+)$", page.read_text(encoding="utf-8"), re.M)]


def tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split()]


def test_every_link_of_the_pages_reaches_a_file_and_a_heading():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not followed here (no test touches the internet)
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in {slug(h) for h in headings(dest)}:
                broken.append(f"{page.relative_to(ROOT)}: {target} (no heading #{anchor} in {path or page.name})")
    assert not broken, "\n".join(broken)


def test_every_cited_section_is_a_heading_of_its_page():
    sources = PAGES + [ROOT / "Makefile", *tracked("lib/*.py", "notebooks/*.py")]
    broken = []
    for src in sources:
        for page, title in CITED.findall(src.read_text(encoding="utf-8")):
            dest = ROOT / ("README.md" if page.startswith("README") else page)
            title = " ".join(title.split())  # a citation may wrap; it may give a heading's first words
            if not dest.exists() or not any(h.startswith(title) for h in headings(dest)):
                broken.append(f"{src.relative_to(ROOT)}: {page}, \"{title}\"")
    assert not broken, "cited sections that are no heading:\n" + "\n".join(broken)


def test_the_papers_are_named_not_numbered():
    numbered = [f"{p.relative_to(ROOT)}:{i}" for p in tracked() if p.suffix in {".py", ".md", ".toml", ".j2", ".cff", ""}
                and p.is_file() for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                if re.search(r"\bpaper 00[02]\b", line)]
    assert not numbered, "say 'the SAGE paper' or 'the Narrative paper': " + ", ".join(numbered)


def test_no_table_row_of_a_page_is_there_twice():
    twice = []
    for page in PAGES:
        rows = [line for line in page.read_text(encoding="utf-8").splitlines()
                if line.startswith("|") and not set(line) <= set("|-: ")]
        twice += [f"{page.relative_to(ROOT)}: {r[:80]}" for r in sorted(set(rows)) if rows.count(r) > 1]
    assert not twice, "\n".join(twice)


def test_the_docs_screenshots_show_the_site_this_code_builds(tmp_path):
    """docs/site_landing.png was taken of the current templates and stylesheet (`make screenshots`
    retakes it); a sidecar from another version of the site, or none, is named as stale."""
    from judgelab.site import screenshots

    assert screenshots.stale() == []
    for name in screenshots.SHOTS:
        (tmp_path / name).write_bytes(b"png")
    assert len(screenshots.stale(tmp_path)) == len(screenshots.SHOTS)          # no sidecar
    for name in screenshots.SHOTS:
        (tmp_path / name).with_suffix(".json").write_text('{"site_fingerprint": "an older site"}')
    assert all("older site" in s for s in screenshots.stale(tmp_path))
