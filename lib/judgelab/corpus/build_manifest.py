"""Build ``data/corpus/stories.csv`` from what the mirror truly holds (run once; the CSV is committed).

``python -m judgelab.corpus.build_manifest --mirror ../shared/mirror``

- canonical and pulp: every story in ``stories/manifest.csv`` (public domain, Project Gutenberg
  editions pinned by repository commit);
- llm: 20 stories from ``llm_stories/eqbench_longform`` of 2,000–8,000 words, in the paper's tiers
  (10 high / 5 average / 5 low) by the benchmark's LLM-judge final score (0–100): the 10 highest,
  the 5 nearest the median, the 5 lowest. At most 3 stories per generating model in the high tier
  so that one model does not make up the whole tier.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
from urllib.parse import quote
from pathlib import Path

from judgelab import paths
from judgelab.corpus.acquire import sha256_bytes, sha256_file
from judgelab.corpus.manifest import WORD_RANGE
from judgelab.corpus.text import clean_story, count_words

COLUMNS = [
    "story_id", "category", "title", "author", "year", "translator", "model", "tier", "judge_score",
    "words", "sha256", "text_sha256", "raw_path", "mirror_path", "record", "source_url",
    "extract_start", "extract_end", "notes",
]
EQBENCH = "llm_stories/eqbench_longform/longform_stories_selected.jsonl"
EQBENCH_URL = "https://github.com/EQ-bench/longform-writing-bench/tree/d1c625505b1cf8baf32a49c8e21a9cf93a254044/results"


def _anchors(text: str, n: int = 8) -> tuple[str, str]:
    words = text.split()
    return " ".join(words[:n]), " ".join(words[-n:])


def public_domain_rows(mirror: Path) -> list[dict]:
    rows = []
    with open(mirror / "stories" / "manifest.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            rel = f"stories/{r['category']}/{r['id']}.txt"
            data = (mirror / rel).read_bytes()
            text = clean_story(data.decode("utf-8-sig"))
            start, end = _anchors(text)
            rows.append({
                "story_id": r["id"], "category": r["category"], "title": r["title"], "author": r["author"],
                "year": r["year_first_published"], "translator": r["translator"], "model": "", "tier": "",
                "judge_score": "", "words": count_words(text), "sha256": sha256_bytes(data),
                "text_sha256": sha256_bytes(text.encode("utf-8")),
                "raw_path": rel, "mirror_path": rel, "record": "",
                "source_url": f"https://raw.githubusercontent.com/{r['source_repo']}/{r['source_commit']}/{r['source_path']}",
                "extract_start": start, "extract_end": end, "notes": r["pd_basis"],
            })
    return rows


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")[:40]


def llm_rows(mirror: Path, n_high: int = 10, n_avg: int = 5, n_low: int = 5, per_model_high: int = 3) -> list[dict]:
    recs = [json.loads(line) for line in open(mirror / EQBENCH, encoding="utf-8")]
    pool = []
    for rec in recs:
        text = rec.get("story_text") or ""
        words = count_words(clean_story(text))
        if WORD_RANGE[0] <= words <= WORD_RANGE[1]:
            pool.append((rec, words))
    pool.sort(key=lambda p: (-p[0]["final_score"], p[0]["model"], p[0]["iteration"]))
    high, counts = [], {}
    for rec, words in pool:
        if len(high) == n_high:
            break
        if counts.get(rec["model"], 0) < per_model_high:
            high.append((rec, words))
            counts[rec["model"]] = counts.get(rec["model"], 0) + 1
    rest = [p for p in pool if p not in high]
    low = rest[-n_low:]
    middle = rest[: len(rest) - n_low]
    median = sorted(p[0]["final_score"] for p in pool)[len(pool) // 2]
    avg = sorted(middle, key=lambda p: (abs(p[0]["final_score"] - median), p[0]["model"]))[:n_avg]
    rows = []
    for tier, group in (("high", high), ("average", avg), ("low", low)):
        for rec, words in group:
            data = rec["story_text"].encode("utf-8")
            text = clean_story(rec["story_text"])
            model = rec["model"]
            sid = f"llm_{_slug(model)}_{rec['iteration']}"
            rows.append({
                "story_id": sid, "category": "llm", "title": rec["title"].split("—")[-1].strip(),
                "author": model, "year": "2025", "translator": "", "model": model, "tier": tier,
                "judge_score": rec["final_score"], "words": words, "sha256": sha256_bytes(data),
                "text_sha256": sha256_bytes(text.encode("utf-8")),
                "raw_path": f"stories/llm/{sid}.txt", "mirror_path": EQBENCH,
                "record": f"model={model}|iteration={rec['iteration']}", "source_url": EQBENCH_URL,
                "extract_start": "", "extract_end": "",
                "notes": f"EQ-Bench longform; LLM judge (Claude 3.7 Sonnet) final score {rec['final_score']}/100; "
                         f"prompt '{rec['title']}'; licence unstated upstream",
            })
    return rows


def external_rows(mirror: Path) -> list[dict]:
    """The other external files the notebooks read (news collection, VisPub, human-rated sets)."""
    nt = "https://raw.githubusercontent.com/faustogerman/narrative-trails/db60d75/data/NewsData"
    items = [
        ("news_text", "narrative/news/text_data.csv", f"{nt}/text_data.csv", ""),
        ("news_embeddings", "narrative/news/embeddings_text-embedding-3-small.npy", f"{nt}/embed_data-gpt4.pickle", "torch_pickle_to_npy"),
        ("vispub", "vispub/vispub.csv", "", ""),
    ]
    # The human-rated sets of notebook 11: every file of both folders, fetched from the
    # upstream repositories at the mirrored commits when no mirror is at hand.
    human = {
        "llm_stories/confederacy_of_models": "https://raw.githubusercontent.com/komoku/confederacy-of-models/23fd86df9fd90f242455150dbe3ad4222f94aff9",
        "llm_stories/art_or_artifice": "https://raw.githubusercontent.com/salesforce/creativity_eval/fced0ab2d3068244152d1302a8bd8e9f538440f5/Art_or_Artifice",
    }
    for folder, base in human.items():
        for f in sorted((mirror / folder).rglob("*")):
            if f.is_file() and f.name not in ("README.md",):
                rel = f.relative_to(mirror).as_posix()
                sub = f.relative_to(mirror / folder).as_posix()
                items.append((("artifice:" if "artifice" in folder else "confederacy:") + sub, rel, f"{base}/{quote(sub)}", ""))
    rows = []
    for key, rel, url, conv in items:
        if (mirror / rel).exists():
            rows.append({"key": key, "raw_path": rel, "mirror_path": rel, "url": url, "convert": conv,
                         "sha256": sha256_file(mirror / rel)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=str(paths.data_mirror() or "../shared/mirror"))
    args = ap.parse_args(argv)
    mirror = Path(args.mirror)
    rows = public_domain_rows(mirror) + llm_rows(mirror)
    out = paths.corpus_dir() / "stories.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    ext = paths.project_root() / "data" / "manifests" / "external_files.csv"
    ext.parent.mkdir(parents=True, exist_ok=True)
    with open(ext, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["key", "raw_path", "mirror_path", "url", "convert", "sha256"])
        w.writeheader()
        w.writerows(external_rows(mirror))
    print(f"wrote {out} ({len(rows)} stories) and {ext}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
