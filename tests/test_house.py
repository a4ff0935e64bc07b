"""The house rules a reader relies on, checked so they stay true: no module
of the product over 600 lines (a longer one is split by concept), and no two
modules that import each other, directly or round a circle — the packages'
layers are import-linter's (``make lint``); this holds inside each package."""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("teachd", "recorder", "compiler")
MAX_LINES = 600


def test_no_module_of_the_product_is_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for top in PRODUCT for p in sorted((ROOT / top).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_circles_are_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_modules_of_the_product_import_each_other_round_a_circle() -> None:
    graph = grimp.build_graph(*PRODUCT)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert circles(edges) == []
