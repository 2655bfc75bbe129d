"""``make own``: your own texts through the same numbered notebooks, into ``results/own/<name>/``.

- ``python -m judgelab.own_texts stories <folder>``: the folder is checked first (every problem
  named, nothing run: ``judgelab.corpus.own_stories``), then notebooks 01-05 run with
  ``STORY_FOLDER`` (01 reads the folder) and ``STORIES`` (02-04 judge every story of it), and 06
  only when two categories have enough stories (the reason is in ``sage_own_genre_decision.csv``).
- ``python -m judgelab.own_texts collection <file> --text T --date D [--title X] [--embeddings E]
  [--endpoints P]``: notebooks 07-09 with ``COLLECTION_FILE`` and the column names (07 checks the
  file row by row before any embedding); ``--endpoints``: the user's endpoint pairs for 08, checked
  against the file's documents before any notebook runs.

Each run writes under its own output root (the same tables, figures, sidecars and run record as
the papers' runs), so it never touches the papers' outputs, and ends with its run record.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

from judgelab import paths, pipeline, profiles, runrecord, settings_file
from judgelab.corpus import own_stories

STORY_NOTEBOOKS = ("01", "02", "03", "04", "05")
GENRE_NOTEBOOK = "06"
JUDGE_NOTEBOOKS = ("02", "03", "04")
COLLECTION_NOTEBOOKS = ("07", "08", "09")
# what every collection run passes; a subset of 07-09 (e.g. 08 again with other ENDPOINTS) uses some
COLLECTION_PARAMETERS = ("COLLECTION_FILE", "TEXT_COLUMN", "DATE_COLUMN", "TITLE_COLUMN", "EMBEDDINGS")
DEFAULT_PROFILE = "own"


def own_root(name: str, base: Path | None = None) -> Path:
    """``<output root>/results/own/<name>``: where one of your runs writes."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"NAME={name!r}: give a plain folder name (letters, digits, - and _)")
    return (base or paths.output_root()) / "results" / "own" / name


PARAMETER_LINE = re.compile(r"^([A-Z][A-Z0-9_]*)\s*=", re.M)


def declared_parameters(source: Path) -> set[str]:
    """The names a notebook's ``parameters`` cell assigns (jupytext percent format)."""
    text = source.read_text(encoding="utf-8")
    start = text.find('# %% tags=["parameters"]')
    if start < 0:
        return set()
    end = text.find("# %%", start + 1)
    return set(PARAMETER_LINE.findall(text[start:end if end > 0 else None]))


def _for_each(sources: list[Path], params: dict, optional=()) -> dict[Path, dict]:
    """Each notebook gets the parameters it declares; one that none declares is an error (so that a
    renamed parameter can never let notebook 01 read the papers' corpus into results/own/), unless
    it is ``optional`` (a collection's parameters when only some of 07-09 run, e.g. 08 again)."""
    declared = {src: declared_parameters(src) for src in sources}
    unused = sorted(set(params) - set().union(*declared.values()) - set(optional))
    if unused:
        raise ValueError(f"parameter(s) {unused} are declared by none of {[s.name for s in sources]}")
    return {src: {k: v for k, v in params.items() if k in names} for src, names in declared.items()}


def _run(numbers, profile: str, params: dict, root: Path, optional=()) -> None:
    sources = [pipeline.find_notebook(n) for n in numbers]
    given = _for_each(sources, params, optional)
    with settings_file.exported({"JUDGELAB_OUTPUT_ROOT": str(root)}):  # the notebooks' kernels inherit it
        for source in sources:
            print(f"[judgelab own] running {source.name} (profile={profile}) -> {root}", flush=True)
            started = time.monotonic()
            out = pipeline.run_notebook(source, profile, given[source])
            took = int(time.monotonic() - started)
            print(f"[judgelab own] wrote {out} in {took // 60} min {took % 60:02d} s", flush=True)
        print(f"[judgelab own] run record {runrecord.write(profile)}", flush=True)


def run_stories(folder: Path | str, name: str | None, profile: str = DEFAULT_PROFILE,
                numbers=STORY_NOTEBOOKS, extra: dict | None = None, estimate: bool = False) -> Path:
    """Check ``folder`` (raises ``OwnTextError`` before any notebook), then run its notebooks
    (``extra``: more notebook parameters, as ``make nb-NN ARGS="-p NAME VALUE"`` gives them).
    ``estimate``: run notebook 01 only and price 02-04 with ``make estimate``'s code (offline: the
    calls, tokens, USD and wall time of the configured judge), into ``results/estimate/``."""
    folder = Path(folder).resolve()
    own = own_stories.open_folder(folder, profile)
    root = own_root(name or folder.name)
    numbers = list(numbers)
    run_genre = bool(own.genre_decision["genre_statistics"].iloc[0])
    if run_genre and GENRE_NOTEBOOK not in numbers and numbers == list(STORY_NOTEBOOKS):
        numbers.append(GENRE_NOTEBOOK)
    print(f"[judgelab own] {len(own.corpus)} stories from {folder}; {len(own.skipped)} file(s) skipped "
          f"(listed in sage_own_skipped.csv); {own.genre_decision['reason'].iloc[0]}", flush=True)
    if estimate:  # notebook 01 (no judge), then the judge notebooks priced offline, nothing called
        _run(["01"], profile, {"STORY_FOLDER": str(folder)}, root)
        priced = [sys.executable, "-m", "judgelab.estimate", "--profile", profile, "--notebooks", ",".join(JUDGE_NOTEBOOKS)]
        subprocess.run(priced, check=True, env=settings_file.child_environment({"JUDGELAB_OUTPUT_ROOT": str(root)}))
        return root
    _run(numbers, profile, {"STORY_FOLDER": str(folder), "STORIES": ",".join(own.corpus["story_id"]),
                            **(extra or {})}, root)
    return root


class OwnCollectionStop(ValueError):
    """A check of the collection (its endpoints, its price) stopped; the check printed why."""


def _module(args: list[str], capture: bool = False) -> str:
    """``python -m <args>`` (a study's or the estimate's own entry point: this floor module imports
    neither); its exit 2 (bad input, already printed) becomes :class:`OwnCollectionStop`."""
    done = subprocess.run([sys.executable, "-m", *args], stdout=subprocess.PIPE if capture else None, text=True)
    if done.returncode == 2:
        raise OwnCollectionStop(f"{args[0]} stopped on your input (above); nothing was embedded or judged")
    if done.returncode != 0:
        raise RuntimeError(f"python -m {args[0]} failed (exit {done.returncode})")
    return (done.stdout or "").strip().splitlines()[-1] if capture else ""


def _columns(text: str, date: str, title: str | None) -> list[str]:
    return ["--text", text, "--date", date, *(["--title", title] if title else [])]


def check_endpoints(spec: str, file: Path, *, text: str, date: str, title: str | None) -> str:
    """The user's ``ENDPOINTS`` matched to the documents of ``file`` before any notebook
    (``judgelab.narrative.paths.named_endpoints``); returns the spec notebook 08 is given."""
    return _module(["judgelab.narrative.paths.named_endpoints", spec, str(file), *_columns(text, date, title)],
                   capture=True)


def estimate_collection(file: Path, root: Path, *, text: str, date: str, title: str | None,
                        embeddings: str | None, profile: str) -> None:
    """Price the collection's embedding before any call (``ESTIMATE=1``,
    ``judgelab.estimate.embeddings``): nothing is embedded or judged."""
    _module(["judgelab.estimate.embeddings", str(file), "--root", str(root), "--profile", profile,
             *_columns(text, date, title), *(["--embeddings", embeddings] if embeddings else [])])


def run_collection(file: Path | str, name: str | None, *, text: str, date: str, title: str | None = None,
                   embeddings: str | None = None, endpoints: str | None = None, profile: str = DEFAULT_PROFILE,
                   numbers=COLLECTION_NOTEBOOKS, extra: dict | None = None, estimate: bool = False) -> Path:
    """Run notebooks 07-09 on the collection in ``file`` (07 checks it before any embedding);
    ``endpoints``: the user's pairs for notebook 08 (:mod:`named_endpoints`), checked first;
    ``estimate``: price the embedding only (:func:`estimate_collection`), run nothing."""
    file = Path(file).resolve()
    root = own_root(name or file.stem)
    if estimate:
        estimate_collection(file, root, text=text, date=date, title=title, embeddings=embeddings, profile=profile)
        return root
    params = {"COLLECTION_FILE": str(file), "TEXT_COLUMN": text, "DATE_COLUMN": date,
              "TITLE_COLUMN": title, "EMBEDDINGS": embeddings, **(extra or {})}
    if endpoints:
        params["ENDPOINTS"] = check_endpoints(endpoints, file, text=text, date=date, title=title)
    _run(list(numbers), profile, params, root, optional=COLLECTION_PARAMETERS)
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgelab.own_texts", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stories", help="a folder of .txt/.md stories (+ optional stories.csv)")
    s.add_argument("folder")
    c = sub.add_parser("collection", help="a dated collection (CSV, JSONL or Parquet)")
    c.add_argument("file")
    c.add_argument("--text", default="text")
    c.add_argument("--date", default="date")
    c.add_argument("--title", default=None)
    c.add_argument("--embeddings", default=None, help="a column of vectors or a .npy file")
    c.add_argument("--dense-limit", type=int, default=None,
                   help="documents above which notebook 07 takes the sparse nearest-neighbour route (default: the profile's)")
    c.add_argument("--endpoints", default=None,
                   help="your endpoint pairs: a CSV (source,target) or 'a -> b; c -> d' (document numbers or titles)")
    for p in (s, c):
        p.add_argument("--name", default=None, help="results/own/<name>/ (default: the folder's or file's name)")
        p.add_argument("--profile", default=DEFAULT_PROFILE, choices=profiles.PROFILES)
        p.add_argument("--notebooks", default=None, help="a subset, e.g. '01 02'")
    s.add_argument("--estimate", action="store_true", help="notebook 01, then 02-04 priced offline (no call)")
    c.add_argument("--estimate", action="store_true", help="price the embedding offline (no call, no notebook)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "stories":
            nbs = args.notebooks.split() if args.notebooks else STORY_NOTEBOOKS
            root = run_stories(args.folder, args.name, args.profile, nbs, estimate=args.estimate)
        else:
            nbs = args.notebooks.split() if args.notebooks else COLLECTION_NOTEBOOKS
            root = run_collection(args.file, args.name, text=args.text, date=args.date, title=args.title,
                                  embeddings=args.embeddings, endpoints=args.endpoints, profile=args.profile,
                                  numbers=nbs, estimate=args.estimate,
                                  extra={"DENSE_LIMIT": args.dense_limit} if args.dense_limit else None)
    except (own_stories.OwnTextError, ValueError) as exc:
        print(f"[judgelab own] {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a notebook stopped (papermill): show its error, not papermill's frame
        if type(exc).__name__ != "PapermillExecutionError":
            raise
        print(f"[judgelab own] {exc.ename}: {exc.evalue}", file=sys.stderr)
        return 1
    print(f"[judgelab own] done: tables in {root / 'results' / 'tables'}, figures in {root / 'figures'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
