"""``python -m judgelab.site``: build ``<output root>/site/`` from the notebooks' outputs (``make site``)."""
from __future__ import annotations

import sys

from judgelab.site.build import SiteInputMissing, build_site


def main() -> int:
    try:
        print(build_site())
    except SiteInputMissing as exc:
        print(f"make site: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
