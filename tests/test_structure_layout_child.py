"""The window's drawings laid out in a child process: the same layout as in this process, none of grandalf's work
here, and laid out here when the child cannot answer."""

from __future__ import annotations

import json

import pytest

from neffbench.structure import document, flow, layout, layout_child
from tests.test_structure_core import deep_document


@pytest.fixture(autouse=True)
def _layout_child():
    yield
    from neffbench.probe.client import close_shared

    close_shared()


def _chain():
    """A run of 12 alike layers drawn whole: edges crossing many ranks, as a long model's."""
    deep = document.of(deep_document(12))
    return flow.flow(deep, "model", expanded=frozenset({"model.layers.0"}))


def test_a_drawing_is_laid_out_in_the_child_as_it_would_be_here(monkeypatch):
    chain = _chain()
    here = layout.layout(chain)

    def nothing_here(_sized):
        raise AssertionError("laid out in the window's process")

    monkeypatch.setattr(layout, "arrange", nothing_here)
    there = layout_child.lay_out(chain)
    # A chain has one layout (no crossings to choose between); its edges come in any order.
    assert there.boxes == here.boxes and set(there.boxes) == {v.id for v in chain.vertices}
    assert sorted(there.edges) == sorted(here.edges) and {(a, b) for a, b, _ in there.edges} == set(chain.edges)
    assert (there.width, there.height) == (here.width, here.height)


def test_a_layout_is_json_and_back():
    here = layout.layout(_chain())
    assert layout.from_json(json.loads(json.dumps(layout.to_json(here)))) == here


def test_without_the_child_a_drawing_is_laid_out_here(monkeypatch):
    monkeypatch.setattr(layout_child, "LAYOUT_MODULE", "neffbench.workers.no_such_worker")
    chain = _chain()
    assert set(layout_child.lay_out(chain).boxes) == {v.id for v in chain.vertices}
