"""Parallel branches are checked like workflows of their own: each branch is seen as a view of
its workflow whose steps are the branch's steps (the same state, input and file, positions
mapped back), so every step check applies to branch steps, and a route stays inside its branch."""

from __future__ import annotations

from typing import Any

from wfops.loader.project import Loaded
from wfops.loader.yaml import Document


class BranchView(Loaded):
    """Branch `branch` of the parallel step at `at` of the workflow file `file`."""

    def __init__(self, file: str, doc: Document, model: Any, *, branch: str = "", at: tuple[Any, ...] = ()) -> None:
        super().__init__(file, doc, model)
        self.branch = branch
        self.at = at


def branch_views(loaded: Loaded) -> list[BranchView]:
    """One view per branch of each parallel step of `loaded` (nested branches: of the views)."""
    views: list[BranchView] = []
    for index, step in enumerate(loaded.model.steps):
        for name, steps in (getattr(step, "parallel", None) or {}).items():
            prefix = ("steps", index, "parallel", name)
            views.append(BranchView(loaded.file, _view_doc(loaded.doc, prefix),
                                    loaded.model.model_copy(update={"steps": steps, "start": None, "output": None,
                                                                    "output_schema": None}),
                                    branch=name, at=(*getattr(loaded, "at", ()), *prefix)))
    return views


def _view_doc(doc: Document, prefix: tuple[Any, ...]) -> Document:
    cut = len(prefix)

    def mapped(table: dict[Any, Any]) -> dict[Any, Any]:
        return {("steps", *path[cut:]): where for path, where in table.items() if path[:cut] == prefix}

    raw: Any = doc.data
    for part in prefix:
        raw = raw[part] if isinstance(raw, dict | list) else None
    positions = mapped(doc.positions)
    positions[()] = doc.positions.get(prefix, doc.positions.get((), (1, 1)))
    return Document(doc.file, {**(doc.data if isinstance(doc.data, dict) else {}), "steps": raw or []},
                    positions, mapped(doc.key_positions))
