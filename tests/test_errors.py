"""The exception tree drawn in wfops/errors.py is the real one: every exception class wfops
defines appears there, under its real parent, and nothing else does."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys

import wfops
import wfops.errors
from wfops.errors import WfopsError

# A drawn line: its tree prefix (four characters a level), then the class's dotted name.
LINE = re.compile(r"^    (?P<bars>(?:│   |    )*)(?P<branch>├── |└── )?(?P<name>[A-Za-z_][\w.]*)(?:\s|$)")


def every_module() -> None:
    for found in pkgutil.walk_packages(wfops.__path__, "wfops."):
        if found.name != "wfops.__main__":  # it runs the command line
            importlib.import_module(found.name)


def dotted(cls: type) -> str:
    """The name the docstring gives a class: bare for wfops.errors, else its module under wfops."""
    module = cls.__module__.removeprefix("wfops.")
    return cls.__qualname__ if module == "errors" else f"{module}.{cls.__qualname__}"


def drawn() -> tuple[set[tuple[str, str]], set[str]]:
    """(child, parent) edges of the drawn tree, and the names listed as raised and caught inside."""
    doc = wfops.errors.__doc__ or ""
    tree_text, _, rest = doc.partition("\n\n    WfopsError")[2].partition("\n\n")
    edges: set[tuple[str, str]] = set()
    parents = ["WfopsError"]
    for line in tree_text.splitlines()[1:]:
        match = LINE.match(line)
        assert match and match["branch"], f"not a line of the tree: {line!r}"
        depth = len(match["bars"]) // 4 + 1
        del parents[depth:]
        edges.add((match["name"], parents[depth - 1]))
        parents.append(match["name"])
    inside_text = rest.partition("\n\n")[2].partition("\n\n")[0]
    inside = {m["name"] for m in map(LINE.match, inside_text.splitlines()) if m}
    return edges, inside


def real() -> tuple[set[tuple[str, str]], set[str]]:
    every_module()
    edges: set[tuple[str, str]] = set()
    todo = [WfopsError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("wfops."):
                edges.add((dotted(sub), dotted(cls)))
                todo.append(sub)
    others = {dotted(obj) for name, module in list(sys.modules.items()) if name.startswith("wfops.")
              for obj in vars(module).values()
              if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == name
              and not issubclass(obj, WfopsError)}
    return edges, others


def test_the_drawn_tree_is_the_real_one() -> None:
    drawn_edges, _ = drawn()
    real_edges, _ = real()
    assert ("StepTimeout", "CapabilityError") in drawn_edges  # the drawing is read at all
    assert sorted(drawn_edges - real_edges) == [], "drawn in wfops/errors.py but not so in the code"
    assert sorted(real_edges - drawn_edges) == [], "defined in the code: draw it in wfops/errors.py"


def test_the_exceptions_outside_the_tree_are_listed() -> None:
    _, listed = drawn()
    _, others = real()
    assert "engine.errors.StepFailed" in listed
    assert sorted(listed - others) == [], "listed in wfops/errors.py but not defined (or a WfopsError)"
    assert sorted(others - listed) == [], "an exception outside the tree: list it in wfops/errors.py"
