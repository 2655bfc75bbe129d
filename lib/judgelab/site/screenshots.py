"""The docs' screenshots of the site, retaken by one command and checked for staleness.

``make screenshots`` (``python -m judgelab.site.screenshots``) builds the site from the output
root's last run and photographs its pages in headless Chromium (the system's, as the browser
tests) into ``docs/`` (:data:`SHOTS`). Each picture gets a sidecar ``docs/<name>.json`` with the
sha256 of what decides how the site looks (:func:`fingerprint`: its templates and its stylesheet)
and the run it was taken from. :func:`stale` names every screenshot
whose fingerprint is no longer the code's, so a test fails when the site changed and the picture
in the docs did not.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent
#: docs/<picture>: the site page it shows and the viewport (px) it is taken at
SHOTS = {"site_landing.png": {"page": "index.html", "width": 1280, "height": 900}}
#: what decides how a page looks: the templates and the stylesheet (the data shown is the run's)
LOOKS = ("templates/*.j2", "site.css")


def fingerprint() -> str:
    """sha256 over :data:`LOOKS` (names and bytes, in a fixed order)."""
    h = hashlib.sha256()
    for pattern in LOOKS:
        for path in sorted(SITE.glob(pattern)):
            h.update(path.relative_to(SITE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def docs_dir() -> Path:
    from judgelab import paths

    return paths.project_root() / "docs"


def stale(docs: Path | None = None) -> list[str]:
    """Each screenshot of :data:`SHOTS` that is missing, has no sidecar, or was taken of another
    version of the site than this code builds, with why and the command that retakes it."""
    docs = docs or docs_dir()
    now, out = fingerprint(), []
    for name in SHOTS:
        sidecar = docs / Path(name).with_suffix(".json").name
        if not (docs / name).is_file() or not sidecar.is_file():
            out.append(f"docs/{name}: missing or without its sidecar; retake it with `make screenshots`")
        elif json.loads(sidecar.read_text(encoding="utf-8")).get("site_fingerprint") != now:
            out.append(f"docs/{name}: taken of an older site (its templates or stylesheet changed since); "
                       "retake it with `make screenshots`")
    return out


def chromium() -> str | None:
    from judgelab.config import variable

    return variable("JUDGELAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def take(root: Path | None = None, docs: Path | None = None) -> list[Path]:
    """Build the site from ``root``'s outputs and photograph :data:`SHOTS` into ``docs``."""
    from playwright.sync_api import sync_playwright

    from judgelab import paths
    from judgelab.site.build import build_site

    browser_path = chromium()
    if browser_path is None:
        raise SystemExit("screenshots: no Chromium (`make setup` as root installs Debian's chromium, or set "
                         "JUDGELAB_CHROMIUM to a Chromium binary)")
    root, docs = Path(root or paths.output_root()), docs or docs_dir()
    report = build_site(root=root)
    run = sorted((root / "results" / "runs").glob("*.json")) if (root / "results" / "runs").is_dir() else []
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox", "--disable-gpu"])
        try:
            for name, shot in SHOTS.items():
                page = browser.new_page(viewport={"width": shot["width"], "height": shot["height"]})
                page.goto((report.out / shot["page"]).resolve().as_uri())
                page.screenshot(path=str(docs / name))
                page.close()
                sidecar = {"page": shot["page"], "viewport": [shot["width"], shot["height"]],
                           "site_fingerprint": fingerprint(), "run_record": run[-1].name if run else None,
                           "command": "make screenshots (python -m judgelab.site.screenshots)"}
                (docs / Path(name).with_suffix(".json").name).write_text(json.dumps(sidecar, indent=2) + "\n",
                                                                          encoding="utf-8")
                written.append(docs / name)
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m judgelab.site.screenshots", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say which screenshots are stale (exit 1 if any)")
    args = ap.parse_args(argv)
    if args.check:
        problems = stale()
        print("\n".join(problems) or "screenshots: every one shows the current site")
        return 1 if problems else 0
    for path in take():
        print(f"screenshots: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
