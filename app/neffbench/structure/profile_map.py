"""A profile's framework operations laid on the module tree: each name to a module path, each module's time.

A framework name is the chain of module calls the operation ran in, then the operation:
``NeuronLlamaDecoderLayer[1]/function[2]/aten.add`` (aws-neuron-sdk ``profile-schema-reference.rst``,
``FrameworkInstruction.framework_name``), ``Block[2]/MLP[mlp]/Linear[up]/aten.linear``. Each ``Class[key]`` is
matched against the children the module's forward calls (a ``ModuleList`` is no level of its own): the child of
that class whose attribute is ``key``, else the ``key``-th of that class; a name that leaves levels out (the
docs' example starts at the decoder layer, not at the model holding it) is matched the same way against the
modules further down, in call order. The first part that matches none (``function[2]``) and everything after it
is detail of the module reached so far; a part naming the module itself (the user's root under the workbench's
wrapper) is passed over.

A module's time is the merged time of every operation under it, as the profile's own hierarchy rolls it up
(``FrameworkNode.time_intervals``): overlapping instructions count once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from neffbench.structure.document import Structure

_PART = re.compile(r"^(?P<cls>[^\[\]]+)(?:\[(?P<key>[^\[\]]*)\])?$")


def merged(intervals: Iterable[Sequence[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for start, end in sorted((int(a), int(b)) for a, b in intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def busy_ns(intervals: Iterable[Sequence[int]]) -> int:
    """The time covered by ``intervals``, each instant once."""
    return sum(end - start for start, end in merged(intervals))


class Mapper:
    """Framework names to module paths, for one structure (lookups are cached by name prefix)."""

    def __init__(self, structure: Structure) -> None:
        self.structure = structure
        self._children: dict[str, list[tuple[str, str, str, int]]] = {}

    def _called_children(self, path: str) -> list[tuple[str, str, str, int]]:
        """(path, class, attribute, ordinal among its class) of the modules ``path``'s forward calls."""
        if path not in self._children:
            seen: dict[str, int] = {}
            out = []
            for child in self.structure.flow_children(path):
                node = self.structure.by_path[child]
                ordinal = seen.get(node.cls, 0)
                seen[node.cls] = ordinal + 1
                out.append((child, node.cls, node.name, ordinal))
            self._children[path] = out
        return self._children[path]

    def path_of(self, name: str) -> str:
        """The deepest module of the tree ``name`` maps to (``""``: the root)."""
        here = ""
        for part in name.split("/")[:-1]:
            found = _PART.match(part.strip())
            if found is None:
                break
            cls, key = found["cls"], found["key"]
            step = self._step(here, cls, key)
            if step is None:
                if cls == self.structure.by_path[here].cls:
                    continue  # the module itself (the user's root, named under the workbench's wrapper)
                break
            here = step
        return here

    def _step(self, here: str, cls: str, key: str | None) -> str | None:
        found = self._match(self._called_children(here), cls, key)
        if found is None:  # a level the name leaves out: the modules further down, in call order
            found = self._match(self._descendants(here), cls, key)
        return found

    def _descendants(self, here: str) -> list[tuple[str, str, str, int]]:
        out: list[tuple[str, str, str, int]] = []
        seen: dict[str, int] = {}
        stack = list(reversed(self._called_children(here)))
        while stack:
            path, cls, attr, _ = stack.pop()
            ordinal = seen.get(cls, 0)
            seen[cls] = ordinal + 1
            out.append((path, cls, attr, ordinal))
            stack.extend(reversed(self._called_children(path)))
        return out

    @staticmethod
    def _match(candidates: list[tuple[str, str, str, int]], cls: str, key: str | None) -> str | None:
        same = [c for c in candidates if c[1] == cls]
        for path, _, attr, _ in same:
            if key is not None and attr == key:
                return path
        if key is not None and key.isdigit():
            return next((path for path, _, _, ordinal in same if ordinal == int(key)), None)
        return same[0][0] if len(same) == 1 and key is None else None


@dataclass
class LayerFigures:
    """A module's share of a profile: merged intervals of the operations under it, and their rolled-up counts."""

    intervals: list[list[int]] = field(default_factory=list)
    instructions: dict[str, int] = field(default_factory=dict)
    hbm_bytes: int = 0
    sbuf_bytes: int = 0
    operations: int = 0

    @property
    def busy_ns(self) -> int:
        return busy_ns(self.intervals)


def lay(structure: Structure, framework: list[dict[str, Any]]) -> tuple[dict[str, LayerFigures], list[str]]:
    """Each module's figures (its operations and those of everything under it) and the framework names that map to
    no module below the root (kept at the root)."""
    mapper = Mapper(structure)
    figures: dict[str, LayerFigures] = {}
    unmapped: list[str] = []
    for row in framework:
        name = str(row.get("name") or "")
        path = mapper.path_of(name)
        if not path:
            unmapped.append(name)
        while True:  # the operation counts for its module and every module above it
            fig = figures.setdefault(path, LayerFigures())
            fig.intervals.extend(row.get("intervals") or [])
            fig.operations += 1
            for key, value in row.items():
                if key.endswith("_engine_instruction_count") and isinstance(value, int):
                    engine = key[: -len("_engine_instruction_count")]
                    fig.instructions[engine] = fig.instructions.get(engine, 0) + value
            fig.hbm_bytes += sum(int(row.get(k) or 0) for k in ("hbm_read_bytes", "hbm_write_bytes"))
            fig.sbuf_bytes += sum(int(row.get(k) or 0) for k in ("sbuf_read_bytes", "sbuf_write_bytes"))
            if not path:
                break
            path = path.rpartition(".")[0]
    for fig in figures.values():
        fig.intervals = merged(fig.intervals)
    return figures, unmapped
