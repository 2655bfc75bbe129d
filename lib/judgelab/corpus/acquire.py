"""Acquire external files: ``data/raw/`` first, then ``$DATA_MIRROR``, then the public source URL.

Every file is checked against the sha256 its manifest records. Nothing here is third-party data:
only where to find it and how to check it. Missing items are collected and reported in one
message that says how to provide each. ``make data`` acquires everything at once
(:func:`judgelab.corpus.manifest.acquire_all`).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from judgelab import paths
from judgelab.corpus.text import normalise, strip_gutenberg

EXTERNAL_MANIFEST = "data/manifests/external_files.csv"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 (FIPS 180-4) of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of the file at ``path``, read in 1 MiB chunks (large files never sit in memory)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class AcquisitionError(RuntimeError):
    """One or more files could not be acquired; the message lists each with how to provide it."""


def fetch_url(url: str, timeout: float = 60.0) -> bytes:
    """Download ``url`` (http, https or file) and return its bytes."""
    req = urllib.request.Request(url, headers={"User-Agent": "judgelab-compendium/0.1"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - URLs come from the manifest
        return resp.read()


@dataclass
class Outcome:
    """What happened to one manifest entry."""

    key: str
    path: Path | None = None
    origin: str = ""  # raw | mirror | url
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.path is not None


# ---------------------------------------------------------------- plain files


def _convert(data: bytes, how: str) -> bytes:
    """Turn a downloaded upstream file into the mirrored form (only where the two differ)."""
    if not how:
        return data
    if how == "torch_pickle_to_npy":
        # The authors ship a pickled torch FloatTensor; the compendium reads NumPy.
        import numpy as np
        import torch

        tensor = torch.load(io.BytesIO(data), map_location="cpu", weights_only=False)
        buf = io.BytesIO()
        np.save(buf, np.asarray(tensor, dtype=np.float32))
        return buf.getvalue()
    raise ValueError(f"unknown conversion {how!r} in {EXTERNAL_MANIFEST}")


def acquire_file(entry: dict, mirror: Path | None, allow_download: bool = True) -> Outcome:
    """Acquire one row of the external-files manifest into ``data/raw/<raw_path>``."""
    out = Outcome(key=entry["key"])
    target = paths.data_raw() / entry["raw_path"]
    want = entry["sha256"]
    if target.exists():
        if sha256_file(target) == want:
            out.path, out.origin = target, "raw"
            return out
        out.problems.append(f"{target} has the wrong sha256 (expected {want}); it was ignored")
    if mirror is not None:
        src = mirror / entry["mirror_path"]
        if src.exists():
            if sha256_file(src) == want:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
                out.path, out.origin = target, "mirror"
                return out
            out.problems.append(f"{src} has the wrong sha256 (expected {want})")
        else:
            out.problems.append(f"not in the mirror: {src}")
    if allow_download and entry.get("url"):
        try:
            data = _convert(fetch_url(entry["url"]), entry.get("convert", ""))
        except Exception as exc:  # network errors of every kind end as a reported problem
            out.problems.append(f"download failed from {entry['url']}: {exc}")
        else:
            if sha256_bytes(data) == want:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                out.path, out.origin = target, "url"
                return out
            out.problems.append(f"download from {entry['url']} has sha256 {sha256_bytes(data)}, expected {want}")
    return out


def read_external_manifest(path: Path | None = None) -> list[dict]:
    path = path or paths.project_root() / EXTERNAL_MANIFEST
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# ---------------------------------------------------------------- stories


def _jsonl_record(path: Path, selector: str) -> str:
    """The ``story_text`` of the JSONL record matching ``field=value|field=value``."""
    want = dict(part.split("=", 1) for part in selector.split("|"))
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if all(str(rec.get(k)) == v for k, v in want.items()):
                return rec["story_text"]
    raise KeyError(f"{path}: no record with {selector}")


def extract_between(book: str, start: str, end: str) -> str:
    """Cut one story out of a whole book (Project Gutenberg serves collections) by its first and
    last words, anchors and book normalised alike so that hard wraps don't matter."""
    text = normalise(strip_gutenberg(book))
    i = _find_words(text, start, 0)
    if i is None:
        raise ValueError(f"start anchor {start[:40]!r}... not found")
    j = _find_words(text, end, i[0])
    if j is None:
        raise ValueError(f"end anchor ...{end[-40:]!r} not found after the start")
    return text[i[0] : j[1]]


def _find_words(text: str, anchor: str, pos: int) -> tuple[int, int] | None:
    """Span of ``anchor``'s words in ``text`` from ``pos``, any whitespace (line or paragraph) between them."""
    words = normalise(anchor).split()
    m = re.compile(r"\s+".join(re.escape(w) for w in words)).search(text, pos)
    return (m.start(), m.end()) if m else None


def acquire_story(row: dict, mirror: Path | None, allow_download: bool = True) -> Outcome:
    """Acquire one story of the corpus manifest into ``data/raw/<raw_path>`` (UTF-8 text)."""
    out = Outcome(key=row["story_id"])
    target = paths.data_raw() / row["raw_path"]
    want = row["sha256"]
    if target.exists():
        if sha256_file(target) == want:
            out.path, out.origin = target, "raw"
            return out
        out.problems.append(f"{target} has the wrong sha256 (expected {want}); it was ignored")
    if mirror is not None:
        src = mirror / row["mirror_path"]
        if src.exists():
            data = (_jsonl_record(src, row["record"]).encode("utf-8") if row.get("record")
                    else src.read_bytes())
            if sha256_bytes(data) == want:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                out.path, out.origin = target, "mirror"
                return out
            out.problems.append(f"{src} gives sha256 {sha256_bytes(data)}, expected {want}")
        else:
            out.problems.append(f"not in the mirror: {src}")
    if allow_download and row.get("source_url") and row.get("extract_start"):
        try:
            book = fetch_url(row["source_url"]).decode("utf-8-sig", errors="replace")
            story = extract_between(book, row["extract_start"], row["extract_end"])
        except Exception as exc:
            out.problems.append(f"download/extract from {row['source_url']} failed: {exc}")
        else:
            # A downloaded edition is checked by its normalised text, since line wrapping differs.
            if sha256_bytes(story.encode("utf-8")) == row["text_sha256"]:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(story.encode("utf-8"))
                out.path, out.origin = target, "url"
                return out
            out.problems.append(f"text cut from {row['source_url']} differs from the manifest's text_sha256")
    return out


def _missing_message(outcomes: list[Outcome]) -> str:
    lines = [f"{len(outcomes)} external file(s) could not be acquired:"]
    for o in outcomes:
        lines.append(f"  - {o.key}: " + "; ".join(o.problems or ["no source available"]))
    lines.append(
        "Provide them by (a) setting DATA_MIRROR to a mirror folder (e.g. DATA_MIRROR=../shared/mirror), "
        "(b) copying the files into data/raw/ at the paths named in data/corpus/stories.csv and "
        f"{EXTERNAL_MANIFEST}, or (c) running `make data` on a machine that is online."
    )
    return "\n".join(lines)

