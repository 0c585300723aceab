"""The one key: a snapshot holds until any kind of input it covers changes (in process).

`test_taken.py` proves the same through real processes and the three records; this is the
fast lane's check of the key itself.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import REPO
from wfops.fastpath import snapshot
from wfops.sources.modules import forget_project_modules, import_project_module, note_consulted

WORKFLOW = "name: w\nsteps:\n  - id: a\n    end: done\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "this wfops")
    outside = write(tmp_path / "outside", {"outside_mod.py": "VALUE = 1\n"})
    site = tmp_path / "venv" / "site-packages"
    site.mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(outside))
    root = write(tmp_path / "proj", {"sources.yaml": "sources: {}\n", "workflows/w.yaml": WORKFLOW,
                                     "nodes.py": "import outside_mod\nimport helper\n", "helper.py": "X = 1\n"})
    import_project_module(root, "nodes")
    yield root
    forget_project_modules(root)
    sys.modules.pop("outside_mod", None)  # sys.path itself is restored by monkeypatch


def taken(root: Path) -> dict[str, object]:
    return snapshot.build(root, snapshot.project_files(root), names=snapshot.listing(root))


def _touch_later(path: Path) -> None:
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp, stamp + 1_000_000))  # a coarse clock must still show the change


CHANGES: dict[str, Callable[[Path], None]] = {
    "workflow edited": lambda r: write(r, {"workflows/w.yaml": WORKFLOW + "# edited\n"}),
    "workflow added": lambda r: write(r, {"workflows/v.yaml": WORKFLOW.replace("name: w", "name: v")}),
    "test file added": lambda r: write(r, {"tests/w.wftest.yaml": "workflow: w\ncases: []\n"}),
    "project module edited": lambda r: write(r, {"helper.py": "X = 2\n"}),
    "module appeared where an import looked": lambda r: write(r, {"outside_mod.py": "VALUE = 3\n"}),
    "module outside the project edited": lambda r: write(r.parent / "outside", {"outside_mod.py": "VALUE = 22\n"}),
    "package installed": lambda r: (write(r.parent / "venv" / "site-packages", {"new_pkg.py": ""}),
                                    _touch_later(r.parent / "venv" / "site-packages")),
    "python path changed": lambda r: sys.path.append(str(r.parent / "venv")),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_each_kind_of_input_changed_misses(project: Path, change: str) -> None:
    taken_then = taken(project)
    assert snapshot.unchanged(project, taken_then)
    CHANGES[change](project)
    assert not snapshot.unchanged(project, taken_then)


def test_another_wfops_misses(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken_then = taken(project)
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "another wfops")
    assert not snapshot.unchanged(project, taken_then)


def test_the_parts_it_holds(project: Path) -> None:
    held = taken(project)
    assert held["format"] == snapshot.FORMAT and held["tool"] == "this wfops"
    assert held["listing"] == ["sources.yaml", "workflows/w.yaml"] and set(held["files"]) == set(held["listing"])
    python = held["python"]
    assert isinstance(python, dict) and {"nodes.py", "helper.py"} <= set(python)
    assert python["outside_mod.py"] is None  # looked for in the project first, not there
    libraries = held["libraries"]
    assert isinstance(libraries, dict)
    assert str(project.parent / "outside" / "outside_mod.py") in libraries
    assert not any(name.startswith(str(project.resolve())) for name in libraries)  # the project is in `python`
    assert [str(project.parent / "outside"), [(project.parent / "outside").stat().st_mtime_ns]] in held["path"]


def test_libraries_noted_from_a_served_record_are_covered(project: Path, tmp_path: Path) -> None:
    # What a record served without importing had loaded counts as loaded here.
    lib = write(tmp_path / "elsewhere", {"lib.py": "A = 1\n"}) / "lib.py"
    stat = lib.stat()
    note_consulted(project, [], {str(lib): [stat.st_mtime_ns, stat.st_size]})
    held = taken(project)
    assert snapshot.unchanged(project, held)
    write(lib.parent, {"lib.py": "A = 22\n"})
    assert not snapshot.unchanged(project, held)


def test_another_project_on_the_path_is_not_part_of_the_key(project: Path, tmp_path: Path) -> None:
    # One process may validate several projects; importing one's module takes another's root
    # off sys.path when their module names clash. Neither root is the environment's.
    other = write(tmp_path / "other", {"othermod.py": "X = 3\n"})
    import_project_module(other, "othermod")
    try:
        held = taken(project)
        sys.path.remove(str(other.resolve()))
        assert snapshot.unchanged(project, held)
    finally:
        forget_project_modules(other)


def test_a_folder_put_on_the_path_again_is_not_a_change(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held = taken(project)
    later = [entry for entry in sys.path if entry and os.path.isdir(entry)][-1]
    monkeypatch.setattr(sys, "path", [*sys.path, later])  # searched where it already was: nothing new
    assert snapshot.unchanged(project, held)
    monkeypatch.setattr(sys, "path", [later, *sys.path])  # searched first now: what it holds may shadow
    assert not snapshot.unchanged(project, held)


@pytest.mark.parametrize("damaged", [None, {}, [], "x", {"format": snapshot.FORMAT}])
def test_a_snapshot_that_cannot_be_read_misses(project: Path, damaged: object) -> None:
    assert not snapshot.unchanged(project, damaged)


def test_a_snapshot_of_another_format_misses(project: Path) -> None:
    held = taken(project)
    assert not snapshot.unchanged(project, {**held, "format": snapshot.FORMAT + 1})


def test_the_fast_path_package_imports_at_module_top() -> None:
    # Which modules a hit loads is stated by the imports at the top of each module (and the
    # import-linter contract on them); an import inside a function would hide one.
    inner = []
    for path in sorted((REPO / "wfops" / "fastpath").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inner += [f"{path.name}:{n.lineno}" for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert inner == []
    importlib.import_module("wfops.fastpath.gate")  # and every module loads on its own
