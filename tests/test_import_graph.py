"""The package's import graph (read with ast, judgelab.imports): no study imports another study,
nothing on the floor imports a study, and no two modules import each other, directly or not.

Studies: ``sage``, ``narrative`` and ``human`` (the appendix, which may call SAGE's runner to
judge its stories, ``judgelab.sage.protocol.runner``, and nothing else of another study), and
``behaviour``, the wing over SAGE and the narrative judges (notebook 12), which may import both. The
floor is everything else (paths, profiles, params, reporting, style, tokens, pipeline, interim,
contracts, embeddings, prompting, stats, gateway, corpus, ...).
"""
from __future__ import annotations

import networkx as nx

from judgelab import imports

STUDIES = ("sage", "narrative", "human", "behaviour")
#: Tools above the studies, like the notebooks: they may import any study, and nothing imports them
#: (``estimate`` builds every LLM notebook's requests with the studies' own code).
ABOVE = ("estimate",)
#: The only edges allowed from one study into another: (importer's study, imported module).
ALLOWED_ACROSS = {("human", "judgelab.sage.protocol.runner")}
#: Wings over the two studies: they may import both, and no study imports them. ``behaviour``
#: (notebook 12: recognition, planted instructions, length, self-preference) rebuilds SAGE's and
#: the narrative judges' requests with their own code, so that its unperturbed requests are the ones
#: notebooks 02 and 09 sent (cache hits); copying that code instead would let the two drift apart.
READS_STUDIES = {"behaviour": ("sage", "narrative")}


def study_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STUDIES else None


def edges(graph):
    return sorted((a, b) for a, bs in graph.items() for b in bs)


def cross_study_edges(graph) -> list[tuple[str, str]]:
    return [(a, b) for a, b in edges(graph)
            if study_of(a) and study_of(b) and study_of(a) != study_of(b)
            and (study_of(a), b) not in ALLOWED_ACROSS
            and study_of(b) not in READS_STUDIES.get(study_of(a), ())]


def floor_to_study_edges(graph) -> list[tuple[str, str]]:
    return [(a, b) for a, b in edges(graph) if study_of(a) is None and study_of(b) and not above(a)]


def above(module: str) -> bool:
    parts = module.split(".")
    return len(parts) > 1 and parts[1] in ABOVE


def _show(pairs) -> str:
    return "\n".join(f"  {a} -> {b}" for a, b in pairs)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or not: the strongly connected components
    of more than one module (or with a self-edge), each sorted."""
    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, bs in graph.items() for b in bs if b in graph)
    return sorted(sorted(c) for c in nx.strongly_connected_components(g)
                  if len(c) > 1 or g.has_edge(*(2 * [next(iter(c))])))


# type-only imports (``if TYPE_CHECKING:``) are edges here: naming another module's types is a
# dependency on it, and a circle through one is still a circle
GRAPH = imports.import_graph(type_checking=True)
#: Circles allowed for now (none): the test below fails on any circle, and on an allowance whose
#: circle is gone (so that the allowance is dropped with it).
KNOWN_CYCLES: list[list[str]] = []


def test_the_graph_covers_the_package():
    assert len(GRAPH) > 80 and "judgelab.sage.protocol.runner" in GRAPH
    assert "judgelab.gateway" in GRAPH["judgelab.sage.protocol.runner"]
    # the appendix's one permitted reach into SAGE is seen (so the rule below is not vacuous)
    assert ("judgelab.human.appendix", "judgelab.sage.protocol.runner") in edges(GRAPH)


def test_no_study_imports_another_study():
    bad = cross_study_edges(GRAPH)
    assert not bad, "imports from one study into another:\n" + _show(bad)


def test_the_wing_over_both_studies_reads_them_and_is_read_by_none():
    behaviour = [(a, b) for a, b in edges(GRAPH) if study_of(a) == "behaviour"]
    assert {study_of(b) for _, b in behaviour} >= {"sage", "narrative"}   # the allowance is used
    assert not [(a, b) for a, b in behaviour if study_of(b) == "human"]
    assert not [(a, b) for a, b in edges(GRAPH) if study_of(b) == "behaviour" and study_of(a) not in (None, "behaviour")]


def test_nothing_on_the_floor_imports_a_study():
    bad = floor_to_study_edges(GRAPH)
    assert not bad, "floor modules importing a study:\n" + _show(bad)


def test_nothing_imports_the_tools_above_the_studies():
    bad = [(a, b) for a, b in edges(GRAPH) if above(b) and not above(a)]
    assert not bad, "modules importing a tool above the studies:\n" + _show(bad)


def test_no_import_cycles():
    cycles = find_cycles(GRAPH)
    new = [c for c in cycles if c not in KNOWN_CYCLES]
    assert not new, "import cycles (each line: modules that import each other):\n" + "\n".join(
        "  " + " <-> ".join(c) for c in new)
    assert cycles == KNOWN_CYCLES, "a known circle is gone: drop it from KNOWN_CYCLES"


def test_type_only_imports_are_edges():
    # the gateway's settings name the retry policy's type (RetryPolicy) in their annotations only
    assert ("judgelab.gateway.settings", "judgelab.gateway.retry") in edges(GRAPH)
    assert ("judgelab.gateway.settings", "judgelab.gateway.retry") not in edges(imports.import_graph())


def test_the_gateway_stands_on_the_lowest_floor_only():
    """The gateway needs no reporting, no contracts and no corpus: only paths, tokens, the
    settings file (its environment variables), and provenance (the name of the notebook the pipeline
    runs, for the progress bar, and whether the bundled small model answers; a notebook's run, not
    the gateway, tells the sidecars its judge)."""
    outside = {b for a, bs in GRAPH.items() if a.startswith("judgelab.gateway") for b in bs
               if not b.startswith("judgelab.gateway")}
    assert outside <= {"judgelab.paths", "judgelab.tokens", "judgelab.settings_file",
                       "judgelab.provenance"}, sorted(outside)
    assert GRAPH["judgelab.provenance"] <= {"judgelab.paths", "judgelab.settings_file"}


# ---------------------------------------------------------------- the graph builder on known sources

KNOWN = {"judgelab", "judgelab.a", "judgelab.b", "judgelab.pkg", "judgelab.pkg.c", "judgelab.pkg.d", "judgelab.e"}


def test_every_kind_of_import_is_an_edge():
    src = '''
import judgelab.a
from judgelab import b, not_a_module
from judgelab.pkg import c
from judgelab.pkg.d import some_function
import pandas as pd

def later():
    from judgelab.e import thing    # inside a function: still an edge
'''
    assert imports.imports_of(src, "judgelab.x", KNOWN) == {
        "judgelab.a", "judgelab.b", "judgelab", "judgelab.pkg.c", "judgelab.pkg.d", "judgelab.e"}


def test_blocks_that_never_run_on_import_are_no_edges():
    src = '''
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from judgelab.a import A
else:
    from judgelab.b import B
if __name__ == "__main__":
    from judgelab.e import main
'''
    assert imports.imports_of(src, "judgelab.x", KNOWN) == {"judgelab.b"}
    assert imports.imports_of(src, "judgelab.x", KNOWN, type_checking=True) == {"judgelab.a", "judgelab.b"}


def test_relative_imports_resolve_from_the_module_or_package():
    assert imports.imports_of("from . import d\nfrom .. import a", "judgelab.pkg.c", KNOWN) == \
        {"judgelab.pkg.d", "judgelab.a"}
    assert imports.imports_of("from .c import x", "judgelab.pkg", KNOWN, is_package=True) == {"judgelab.pkg.c"}


def test_find_cycles_known_answer():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set(), "g": {"f"}}
    assert find_cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []
    assert find_cycles({"a": {"a"}, "b": {"c"}}) == [["a"]]          # a self-edge; "c" is not ours


def test_checks_report_the_offending_edges():
    toy = {"judgelab.sage.x": {"judgelab.narrative.y", "judgelab.paths"},
           "judgelab.human.z": {"judgelab.sage.protocol.runner", "judgelab.sage.x"},
           "judgelab.paths": set(), "judgelab.stats.w": {"judgelab.human.z"},
           "judgelab.narrative.y": set(), "judgelab.sage.protocol.runner": set()}
    assert cross_study_edges(toy) == [("judgelab.human.z", "judgelab.sage.x"),
                                      ("judgelab.sage.x", "judgelab.narrative.y")]
    assert floor_to_study_edges(toy) == [("judgelab.stats.w", "judgelab.human.z")]


def test_closure_adds_parent_packages():
    graph = {"judgelab": set(), "judgelab.pkg": set(), "judgelab.pkg.c": {"judgelab.a"}, "judgelab.a": set(),
             "judgelab.b": set()}
    assert imports.closure({"judgelab.pkg.c"}, graph) == {"judgelab", "judgelab.pkg", "judgelab.pkg.c", "judgelab.a"}
