"""Endpoint pairs the user names (``make own COLLECTION=... ENDPOINTS=...``) instead of the
stratified sample of :mod:`endpoints`.

``ENDPOINTS`` is either a CSV file (``*.csv``: columns ``source`` and ``target``, one pair per
line) or the pairs inline, ``a -> b; c -> d``. Each end names one document of the collection:
by its number (``doc`` in ``narr_documents_<collection>``: its data row in the user's file,
counting from 0; a bare whole number is always read as a number) or by its exact title (then
case-insensitive if no title matches exactly; a title shared by several documents must be named
by number). Every problem is listed at once, with the file and line (or the inline pair's
position) and the field, before any embedding or judge call.

Each pair is oriented chronologically as the stratified ones are (source = earlier; same day:
lower number first), so that the temporal graph can hold a path; :func:`resolve`'s table says
when a pair was turned round. A pair without a path in a landscape seed is not dropped silently:
:func:`path_status` lists it per seed.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.narrative.paths.endpoints import orient
from judgelab.params import InputProblems

STRATUM = "named"  # the ``stratum`` of every user-named pair in ``narr_paths``
PAIR_SEPARATOR = ";"
END_SEPARATOR = "->"


class EndpointError(InputProblems):
    """The named endpoints are wrong; the message lists every problem with where it is and the fix."""

    what = "ENDPOINTS"
    consequence = "nothing was embedded or judged"


@dataclass(frozen=True)
class NamedPair:
    """One pair as the user wrote it, and where (``file, line 3`` or ``ENDPOINTS, pair 2``)."""

    source: str
    target: str
    where: str


def locate_file(spec: str, beside: Path | str | None = None) -> Path | None:
    """The CSV file ``spec`` names (as given, else beside ``beside``, the collection file), or None
    when ``spec`` is inline pairs; a ``.csv`` that exists in neither place is an error."""
    spec = str(spec).strip()
    if not spec.lower().endswith(".csv"):
        return None
    given = Path(spec).expanduser()
    candidates = [given] if given.is_absolute() else [given, *([Path(beside).parent / given] if beside else [])]
    for path in candidates:
        if path.is_file():
            return path.resolve()
    raise EndpointError([f"ENDPOINTS={spec}: file not found (looked in {', '.join(str(c) for c in candidates)}); "
                         f"give a CSV with columns source,target or the pairs inline, 'a {END_SEPARATOR} b"
                         f"{PAIR_SEPARATOR} c {END_SEPARATOR} d'"])


def parse(spec: str, beside: Path | str | None = None) -> list[NamedPair]:
    """The pairs of ``spec`` (module doc), syntax checked; ends not yet matched to documents."""
    if spec is None or not str(spec).strip():
        raise EndpointError(["ENDPOINTS is empty; name at least one pair"])
    path = locate_file(spec, beside)
    return _parse_file(path) if path is not None else _parse_inline(str(spec))


def _parse_inline(spec: str) -> list[NamedPair]:
    pairs, problems = [], []
    for k, item in enumerate(spec.split(PAIR_SEPARATOR), 1):
        if not item.strip():
            continue
        ends = item.split(END_SEPARATOR)
        if len(ends) != 2 or not all(e.strip() for e in ends):
            problems.append(f"ENDPOINTS, pair {k} ({item.strip()!r}): write it as 'source {END_SEPARATOR} target' (a title "
                            f"holding '{END_SEPARATOR}' or '{PAIR_SEPARATOR}' goes in a CSV file instead)")
            continue
        pairs.append(NamedPair(ends[0].strip(), ends[1].strip(), f"ENDPOINTS, pair {k}"))
    if problems:
        raise EndpointError(problems)
    if not pairs:
        raise EndpointError(["ENDPOINTS holds no pair; name at least one"])
    return pairs


def _parse_file(path: Path) -> list[NamedPair]:
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EndpointError([f"{path}: not UTF-8 ({exc.reason}); re-save the file as UTF-8"]) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise EndpointError([f"{path}: not a readable CSV ({exc}); columns source,target"]) from None
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in ("source", "target") if c not in raw.columns]
    if missing:
        raise EndpointError([f"{path}: no column(s) {missing}; it has {list(raw.columns)}; "
                             "write a header line 'source,target'"])
    pairs, problems = [], []
    for i, rec in enumerate(raw[["source", "target"]].itertuples(index=False)):
        where = f"{path}, line {i + 2}"
        empty = [f for f, v in zip(("source", "target"), rec) if not str(v).strip()]
        if empty:
            problems.append(f"{where}, field {empty[0]}: empty; name a document by its number or title")
            continue
        pairs.append(NamedPair(str(rec.source).strip(), str(rec.target).strip(), where))
    if problems:
        raise EndpointError(problems)
    if not pairs:
        raise EndpointError([f"{path}: no pair below the header; name at least one"])
    return pairs


def _match(ref: str, docs: pd.DataFrame, by_title: dict[str, list[int]], by_folded: dict[str, list[int]]):
    """(document number, None) or (None, the problem)."""
    n = len(docs)
    if ref.isdigit():
        k = int(ref)
        if k < n:
            return k, None
        return None, f"no document number {k} (the collection has {n}, numbered 0 to {n - 1})"
    found = by_title.get(ref) or by_folded.get(ref.casefold()) or []
    if len(found) == 1:
        return found[0], None
    if not found:
        return None, f"no document titled {ref!r}; give its exact title or its number (narr_documents_own, column doc)"
    shown = ", ".join(str(d) for d in found[:5]) + (" ..." if len(found) > 5 else "")
    return None, f"title {ref!r} is shared by documents {shown}; name one by its number"


def resolve(pairs: list[NamedPair], docs: pd.DataFrame) -> pd.DataFrame:
    """Match every end to one document of ``docs`` (``doc``, ``title``, ``date``: the collection's
    documents in landscape order) and orient each pair chronologically. Columns: ``pair_id``,
    ``where``, ``given_source``, ``given_target``, ``source``, ``target`` (document numbers),
    ``source_title``, ``target_title``, ``source_date``, ``target_date``, ``turned`` (True when the
    given source is the later document). Every problem raises :class:`EndpointError` at once."""
    titles = docs["title"].astype(str).to_numpy()
    by_title: dict[str, list[int]] = {}
    by_folded: dict[str, list[int]] = {}
    for k, t in enumerate(titles):
        by_title.setdefault(t.strip(), []).append(k)
        by_folded.setdefault(t.strip().casefold(), []).append(k)
    dates = pd.to_datetime(docs["date"]).to_numpy()
    problems, rows, seen = [], [], {}
    for p in pairs:
        ends = {}
        for field, ref in (("source", p.source), ("target", p.target)):
            k, problem = _match(ref, docs, by_title, by_folded)
            if problem:
                problems.append(f"{p.where}, field {field}: {problem}")
            ends[field] = k
        if None in ends.values():
            continue
        s, t = ends["source"], ends["target"]
        if s == t:
            problems.append(f"{p.where}: source and target are the same document ({s}); name two documents")
            continue
        src, tgt = (int(x[0]) for x in orient(np.array([s]), np.array([t]), dates))
        if (src, tgt) in seen:
            problems.append(f"{p.where}: the same pair as {seen[(src, tgt)]} ({src}, {tgt}); name each pair once")
            continue
        seen[(src, tgt)] = p.where
        rows.append({"where": p.where, "given_source": p.source, "given_target": p.target,
                     "source": src, "target": tgt, "source_title": titles[src], "target_title": titles[tgt],
                     "source_date": pd.Timestamp(dates[src]), "target_date": pd.Timestamp(dates[tgt]),
                     "turned": src != s})
    if problems:
        raise EndpointError(problems)
    out = pd.DataFrame(rows)
    out.insert(0, "pair_id", np.arange(len(out)))
    return out


def load(spec: str, docs: pd.DataFrame, beside: Path | str | None = None) -> pd.DataFrame:
    """:func:`parse` then :func:`resolve`."""
    return resolve(parse(spec, beside), docs)


def path_status(named: pd.DataFrame, paths: pd.DataFrame) -> pd.DataFrame:
    """Every named pair with, per landscape seed, its max-capacity path length or that it has none
    (``narr_own_endpoints``): the pairs without a path are listed, not dropped."""
    out = named.copy()
    mc = paths[paths["method"] == "maxcap"]
    for seed, g in mc.groupby("seed", sort=True):
        lengths = g.set_index("pair_id")["length"]
        out[f"maxcap_length_seed{int(seed)}"] = out["pair_id"].map(lengths).astype("Int64")
    seeds = [c for c in out.columns if c.startswith("maxcap_length_seed")]
    out["seeds_without_path"] = out[seeds].isna().sum(axis=1) if seeds else 0
    return out


def check_file(spec: str, collection: Path | str, *, text: str, date: str, title: str | None = None) -> str:
    """``ENDPOINTS`` matched to the documents of the user's collection file (``make own`` runs this
    before notebook 07: the collection's own errors and every endpoint problem, nothing embedded);
    returns the spec notebook 08 is given: a CSV's absolute path, or the inline pairs."""
    from judgelab.narrative.landscape import own_collection

    collection = Path(collection)
    located = locate_file(spec, beside=collection)
    col = own_collection.load(collection, text=text, date=date, title=title)  # the landscape's order
    named = load(str(located or spec), col.docs)
    turned = int(named["turned"].sum())
    print(f"[judgelab own] {len(named)} endpoint pair(s) named ({'file ' + str(located) if located else 'inline'})"
          + (f"; {turned} turned round to run forward in time" if turned else ""), file=sys.stderr, flush=True)
    return str(located) if located else spec


def main(argv: list[str] | None = None) -> int:
    """``python -m judgelab.narrative.paths.named_endpoints SPEC COLLECTION --text T --date D
    [--title X]``: exit 0 printing the spec for notebook 08, or exit 2 with every problem."""
    ap = argparse.ArgumentParser(prog="python -m judgelab.narrative.paths.named_endpoints",
                                 description="check ENDPOINTS against a collection file")
    ap.add_argument("spec")
    ap.add_argument("collection")
    ap.add_argument("--text", default="text")
    ap.add_argument("--date", default="date")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        print(check_file(args.spec, args.collection, text=args.text, date=args.date, title=args.title))
    except ValueError as exc:  # EndpointError, the collection's OwnCollectionError
        print(f"[judgelab own] {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
