"""The site in a real browser: headless Chromium opens the smoke run's site from file://.

Checks: no console errors on any page; every image loaded (naturalWidth > 0); every internal link
resolves (the file exists and, for a link with #anchor, the element does); each explorer shows one
point per document of its collection, hovering a point shows that document's title, and choosing a
narrative from the list draws it. Screenshots of the landing page, a table page and an explorer go
to ``<output root>/results/screenshots/``.

The browser is the system's Chromium (``make setup`` installs Debian's ``chromium`` when run as
root), driven by playwright with ``executable_path``; no browser is ever downloaded. Without
Chromium (or playwright) the module is skipped with one line saying why. The site is built from
the smoke run of tests/test_notebooks.py (marker ``after_notebooks``; ``$JUDGELAB_OUTPUT_ROOT``),
or alone from the output root that variable names.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

CHROMIUM = os.environ.get("JUDGELAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    pytest.skip("no Chromium on this machine (`make setup` as root installs Debian's chromium): "
                "browser tests skipped", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (`make setup`)")

from judgelab import interim  # noqa: E402
from judgelab.site.build import build_site  # noqa: E402

pytestmark = [pytest.mark.notebooks, pytest.mark.after_notebooks]


@pytest.fixture(scope="module")
def site():
    root = os.environ.get("JUDGELAB_OUTPUT_ROOT")
    if not root or not (Path(root) / "results" / "executed").is_dir():
        pytest.skip("no smoke run to build the site from: run with tests/test_notebooks.py (or set "
                    "JUDGELAB_OUTPUT_ROOT to the output root of a smoke run)")
    report = build_site(root=Path(root))
    shots = Path(root) / "results" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    return report, shots


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(f"console: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"page error: {e}"))
    yield pg
    pg.close()


def _url(path: Path) -> str:
    return path.resolve().as_uri()


def test_every_page_loads_without_errors_with_every_image_and_every_link(site, page):
    report, shots = site
    problems, targets, ids = [], {}, {}
    for rel in report.pages:
        if rel.startswith("figures/narr_explorer_"):
            continue  # 5 MB each (plotly.js inlined); the explorer tests below load them and check errors
        page.errors.clear()
        page.goto(_url(report.out / rel), wait_until="load")
        problems += [f"{rel}: {e}" for e in page.errors]
        broken = page.evaluate("""() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))
                                          .map(i => i.getAttribute('src'))""")
        problems += [f"{rel}: image not loaded: {src}" for src in broken]
        ids[(report.out / rel).resolve()] = set(page.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)"))
        for href in page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)"):
            if href.startswith("file://"):
                targets.setdefault(href, rel)
    pages_ids: dict[str, set] = {}
    for href, source in targets.items():
        parts = urlsplit(href)
        target = Path(unquote(parts.path)).resolve()
        if not target.exists():
            problems.append(f"{source}: link to a missing file {target}")
            continue
        if parts.fragment and target.suffix == ".html":
            if target not in pages_ids:  # the ids as the browser saw them on its visit above
                pages_ids[target] = ids.get(target) or set()
            if not {parts.fragment, unquote(parts.fragment)} & pages_ids[target]:
                problems.append(f"{source}: no #{parts.fragment} in {target.name}")
    assert not problems, "\n".join(problems)
    assert targets, "no internal links found"


def test_screenshots_of_the_landing_page_and_a_table_page(site, page):
    report, shots = site
    page.goto(_url(report.out / "index.html"))
    page.screenshot(path=str(shots / "site_landing.png"))
    tables = [p for p in report.pages if p.startswith("tables/")]
    assert tables, "the site has no table page"
    chosen = next((p for p in tables if "table01" in p), tables[0])
    page.goto(_url(report.out / chosen))
    page.screenshot(path=str(shots / "site_table.png"))
    assert (shots / "site_landing.png").stat().st_size > 0 and (shots / "site_table.png").stat().st_size > 0


def _explorers(report):
    found = sorted((report.out / "figures").glob("narr_explorer_*.html"))
    if not found:
        pytest.fail("the smoke run wrote no narrative explorer (notebook 08: figures/narr_explorer_<collection>.html)")
    return found


def test_the_explorer_shows_every_document_and_hovering_shows_its_title(site, page):
    report, shots = site
    for path in _explorers(report):
        collection = path.stem.removeprefix("narr_explorer_")
        n_docs = len(interim.read(f"narr_documents_{collection}"))
        page.goto(_url(path), wait_until="load")
        page.wait_for_selector("#landscape .scatterlayer .trace .point")
        shown = page.evaluate("""() => {
            const gd = document.getElementById('landscape');
            const traces = [...gd.querySelectorAll('.scatterlayer .trace')];
            return gd.data.map((t, i) => t.meta === 'documents' ? traces[i].querySelectorAll('.point').length : 0)
                          .reduce((a, b) => a + b, 0);
        }""")
        assert shown == n_docs, f"{collection}: {shown} points drawn for {n_docs} documents"
        # a document off the drawn narrative, so that no path marker sits on top of it
        k, title = page.evaluate("""() => {
            const gd = document.getElementById('landscape');
            const drawn = [...document.querySelectorAll('#paths li')].map(li => li.textContent).join('\\n');
            const pts = [...gd.querySelector('.scatterlayer .trace').querySelectorAll('.point')];
            const k = Math.max(0, pts.findIndex(p => !drawn.includes(gd.data[0].customdata[p.__data__.i][0])));
            return [k, gd.data[0].customdata[pts[k].__data__.i][0]];
        }""")
        box = page.locator("#landscape .scatterlayer .trace").first.locator(".point").nth(k).bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_selector(".hoverlayer .hovertext", timeout=5000)
        assert title in page.locator(".hoverlayer .hovertext").first.text_content()
        assert not page.errors, page.errors
        page.screenshot(path=str(shots / f"explorer_{collection}.png"))


def test_choosing_a_narrative_draws_it(site, page):
    report, _ = site
    for path in _explorers(report):
        page.goto(_url(path), wait_until="load")
        options = page.locator("#narrative option")
        if options.count() < 2:
            pytest.skip(f"{path.name}: fewer than two narratives to choose between in the smoke run")
        choice = options.nth(options.count() - 1)
        page.select_option("#narrative", choice.get_attribute("value"))
        drawn = page.evaluate("""() => {
            const gd = document.getElementById('landscape');
            const first = gd.data.findIndex(t => t.meta === 'maxcap');
            const traces = [...gd.querySelectorAll('.scatterlayer .trace')];
            return {pair: document.body.dataset.shownPair, maxcap: gd.data[first].x.length,
                    points: traces[first].querySelectorAll('.point').length,
                    listed: document.querySelectorAll('#paths .maxcap li').length};
        }""")
        label = choice.text_content()
        assert label.startswith(f"pair {drawn['pair']} ")
        assert drawn["maxcap"] >= 2 and drawn["points"] == drawn["maxcap"] == drawn["listed"]
        assert not page.errors, page.errors


def _meet(a: dict, b: dict) -> bool:
    """Two boxes (left, right, top, bottom in CSS pixels) share some area."""
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_no_text_of_the_explorer_overlaps_its_plot(site, browser):
    """At 1400 x 1000 the narrative's document list sits beside the plot, not under it: no text
    box of the page (heading, notes, the list and its items) meets the plot's drawn area."""
    report, shots = site
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        for path in _explorers(report):
            page.goto(_url(path), wait_until="load")
            page.wait_for_selector("#landscape .scatterlayer .trace .point")
            options = page.locator("#narrative option")
            if options.count() > 1:
                page.select_option("#narrative", options.nth(options.count() - 1).get_attribute("value"))
            found = page.evaluate("""() => {
                const box = e => { const r = e.getBoundingClientRect();
                                   return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
                const plots = [document.getElementById('landscape'),
                               ...document.querySelectorAll('#landscape .main-svg')].map(box);
                const texts = [...document.querySelectorAll('h1, p.meta, label, select, #paths h3, #paths li')]
                    .filter(e => e.getClientRects().length)
                    .map(e => ({text: e.textContent.slice(0, 60), ...box(e)}));
                return {plots, texts, items: document.querySelectorAll('#paths li').length};
            }""")
            bad = [t["text"] for t in found["texts"] for p in found["plots"] if _meet(t, p)]
            assert not bad, f"{path.name}: text over the plot at 1400x1000: {bad[:5]}"
            assert found["items"] > 0 or options.count() == 0
            page.screenshot(path=str(shots / f"explorer_{path.stem.removeprefix('narr_explorer_')}_1400.png"))
    finally:
        page.close()



def test_a_wide_long_table_scrolls_inside_the_window(page, tmp_path):
    """A table page's table (the markup of templates/table.html.j2, 60 columns x 300 rows, with the
    site's stylesheet) scrolls in its own box, and that box ends inside the window: its horizontal
    scrollbar is in view at once (not below the last row), the columns past the page's width can be
    reached, and the header row stays in view while the rows scroll."""
    from judgelab.site import build

    css = Path(build.__file__).with_name("site.css").resolve().as_uri()
    head = "".join(f"<th>column_{j}</th>" for j in range(60))
    rows = "".join("<tr>" + "".join(f"<td>{i * j:.4f}</td>" for j in range(60)) + "</tr>" for i in range(300))
    html = (f'<!doctype html><html><head><link rel="stylesheet" href="{css}"></head><body><main><h1>wide</h1>'
            f'<div class="scroll"><table class="data"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
            "</div></main></body></html>")
    (tmp_path / "wide.html").write_text(html, encoding="utf-8")
    page.goto(_url(tmp_path / "wide.html"))
    box = page.evaluate("""() => {
        const t = document.querySelector('table.data'), s = t.closest('.scroll'), r = s.getBoundingClientRect();
        const before = s.scrollLeft; s.scrollLeft = 1e6; const after = s.scrollLeft;
        s.scrollTop = 1e6; const head = t.querySelector('th').getBoundingClientRect();
        return {bottom: r.bottom, top: r.top, client: s.clientWidth, scroll: s.scrollWidth, before, after,
                headTop: head.top, window: window.innerHeight};
    }""")
    assert box["scroll"] > box["client"] and box["after"] > box["before"], f"the table does not scroll: {box}"
    assert box["bottom"] <= box["window"], f"its scroll box ends below the window, scrollbar out of view: {box}"
    assert box["top"] - 1 <= box["headTop"] <= box["bottom"], f"the header row scrolled away: {box}"
