"""``make data``: acquire every story of the corpus manifest and every external file in one go.

``python -m judgelab.corpus.data`` (the Makefile's ``data`` rule). Kept apart from
:mod:`~judgelab.corpus.acquire` (one file at a time) and :mod:`~judgelab.corpus.manifest` (which
acquires a missing story while loading the corpus) so that neither of those imports the other's
caller: acquisition sits below the manifest, and this module above both.
"""
from __future__ import annotations

import sys

from judgelab import paths
from judgelab.corpus.acquire import (
    AcquisitionError, Outcome, _missing_message, acquire_file, acquire_story, read_external_manifest,
)
from judgelab.corpus.manifest import read_manifest


def acquire_all(allow_download: bool = True, verbose: bool = True) -> list[Outcome]:
    """Acquire every story and external file; raise one AcquisitionError listing all that are missing."""
    mirror = paths.data_mirror()
    outcomes = [acquire_story(r, mirror, allow_download) for r in read_manifest().to_dict("records")]
    outcomes += [acquire_file(e, mirror, allow_download) for e in read_external_manifest()]
    missing = [o for o in outcomes if not o.ok]
    if verbose:
        origins: dict[str, int] = {}
        for o in outcomes:
            if o.ok:
                origins[o.origin] = origins.get(o.origin, 0) + 1
        print(f"acquired {len(outcomes) - len(missing)}/{len(outcomes)} files "
              + ", ".join(f"{n} from {k}" for k, n in sorted(origins.items())))
    if missing:
        raise AcquisitionError(_missing_message(missing))
    return outcomes


def main() -> int:
    try:
        acquire_all()
    except AcquisitionError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
