"""The compendium as a static website (``make site``): :func:`judgelab.site.build.build_site`."""
