"""`wfops validate` serves unchanged python sources from their recorded contracts, unimported.

The source module appends a line to `imports.log` each time it is executed, so an import is
seen whatever process ran it (`run_cli` drops project modules before and after each call, as
a fresh process would not have them).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.harness import WFOPS, process_env, run_cli
from wfops.compiler.validate import validate_project
from wfops.fastpath import snapshot
from wfops.fastpath.contracts import RECORD_FILE, ContractFile
from wfops.sources.python import forget_project_modules
from wfops.sources.recorded import RecordedSource

SOURCES = "sources:\n  helped: {kind: python, module: helped}\n"
HELPED = """\
with open("imports.log", "a") as log:
    log.write("helped\\n")
from pydantic import BaseModel
import wfops
from helper import Out
try:
    from extra import TEXT
except ImportError:
    TEXT = str


class In(BaseModel):
    text: TEXT


@wfops.node
def run(payload: In) -> Out:
    \"\"\"Counts.\"\"\"
    return Out(n=1)
"""
HELPER = "from pydantic import BaseModel\n\nclass Out(BaseModel):\n    n: int\n"
WF = "name: w\nstate:\n  n: {type: integer}\nsteps:\n  - id: a\n    uses: helped.run\n    with: {text: x}\n" \
     "    save: {n: state.n}\n    next: end\n"


@pytest.fixture(autouse=True)
def stable_tool(monkeypatch) -> None:
    """Other work on the wfops code itself must not turn a hit into a miss mid-test."""
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "this wfops")


@pytest.fixture
def root(tmp_path: Path):
    root = write(tmp_path / "proj", {"sources.yaml": SOURCES, "helped.py": HELPED, "helper.py": HELPER,
                                     "workflows/w.yaml": WF})
    yield root
    forget_project_modules(root)
    with contextlib.suppress(ValueError):  # left by the direct `validate_project` calls
        sys.path.remove(str(root.resolve()))


def imports(root: Path) -> int:
    log = root / "imports.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def validate(root: Path) -> list[tuple[str, str, int]]:
    result = run_cli("validate", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.stderr
    return [(d["code"], d["file"], d["line"]) for d in result.json()["diagnostics"]]


def fresh(root: Path) -> list[tuple[str, str, int]]:
    """What validate reports with no cache at all (the modules imported)."""
    for name in ("validate.json", "contracts.json"):
        (root / ".wfops" / "cache" / name).unlink(missing_ok=True)
    before = imports(root)
    found = validate(root)
    assert imports(root) == before + 1
    return found


def edit_workflow(root: Path, text: str = "text: x") -> None:
    write(root, {"workflows/w.yaml": WF.replace("text: x", text)})


def warmed(root: Path) -> None:
    """The first validate imports and records; a workflow edit is then served from the record."""
    assert validate(root) == [] and imports(root) == 1
    assert (root / RECORD_FILE).is_file()
    edit_workflow(root, "text: y")
    assert validate(root) == [] and imports(root) == 1


WORKFLOW_EDITS = {
    "wrong with type": ("text: 5", [("type-mismatch", "workflows/w.yaml", 7)]),
    "missing input": ("other: x", [("missing-input", "workflows/w.yaml", 7),
                                   ("unknown-input", "workflows/w.yaml", 7)]),
    "unchanged meaning": ("text: 'x'", []),
}


@pytest.mark.parametrize("edit", WORKFLOW_EDITS, ids=list(WORKFLOW_EDITS))
def test_a_workflow_edit_is_checked_against_the_recorded_contracts(root: Path, edit: str) -> None:
    warmed(root)
    text, expected = WORKFLOW_EDITS[edit]
    edit_workflow(root, text)
    assert validate(root) == expected
    assert imports(root) == 1  # not imported: the contract the finding needs came from the record
    assert fresh(root) == expected


def test_the_recorded_contracts_are_the_imported_ones(root: Path) -> None:
    imported = validate_project(root, contracts=ContractFile(root))  # imports, records
    forget_project_modules(root)
    served = validate_project(root, contracts=ContractFile(root))
    assert imports(root) == 1 and isinstance(served.sources["helped"], RecordedSource)
    assert served.catalog["helped"] == imported.catalog["helped"]
    assert [cap.description for cap in served.catalog["helped"].values()] == ["Counts."]


def malform(record: Path) -> None:
    """Valid JSON, but a contract of the wrong shape (outcomes not a list)."""
    text = record.read_text(encoding="utf-8")
    assert '"outcomes": ["ok"]' in text
    record.write_text(text.replace('"outcomes": ["ok"]', '"outcomes": "ok"'), encoding="utf-8")


Edit = Callable[[Path], Any]
EDITS: dict[str, tuple[Edit, list[tuple[str, str, int]]]] = {
    "module edited": (lambda r: write(r, {"helped.py": HELPED.replace("text: TEXT", "text: int")}),
                      [("type-mismatch", "workflows/w.yaml", 7)]),
    "module it imports edited": (lambda r: write(r, {"helper.py": HELPER.replace("n: int", "n: str")}),
                                 [("type-mismatch", "workflows/w.yaml", 8)]),
    "module it looked for created": (lambda r: write(r, {"extra.py": "TEXT = int\n"}),
                                     [("type-mismatch", "workflows/w.yaml", 7)]),
    "record deleted": (lambda r: (r / RECORD_FILE).unlink(), []),
    "record corrupt": (lambda r: (r / RECORD_FILE).write_text("{oops", encoding="utf-8"), []),
    "record with a malformed contract": (lambda r: malform(r / RECORD_FILE), []),
    "declaration changed": (lambda r: write(r, {"sources.yaml": SOURCES.replace("module: helped", "module: other"),
                                                "other.py": HELPED.replace("text: TEXT", "text: int")}),
                            [("type-mismatch", "workflows/w.yaml", 7)]),
    "source added": (lambda r: write(r, {"sources.yaml": SOURCES + "  more: {kind: python, module: helper}\n"}),
                     []),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_what_the_imports_depend_on_changed_imports_again(root: Path, edit: str) -> None:
    warmed(root)
    change, expected = EDITS[edit]
    change(root)
    edit_workflow(root)  # with it, the project cache misses whatever the edit was
    assert validate(root) == expected
    assert imports(root) == 2
    edit_workflow(root, "text: z")  # recorded again: the next workflow edit is served
    assert validate(root) == expected and imports(root) == 2
    assert fresh(root) == expected


def test_a_module_edit_alone_misses_the_validate_cache_after_a_served_run(root: Path) -> None:
    # The served run's validate-cache entry must name the module's places, as an import would.
    warmed(root)
    write(root, {"helped.py": HELPED.replace("text: TEXT", "text: int")})
    assert validate(root) == [("type-mismatch", "workflows/w.yaml", 7)]
    assert imports(root) == 2


def test_a_declared_module_created_after_an_import_error_is_imported(root: Path) -> None:
    (root / "helped.py").unlink()
    assert [code for code, _, _ in validate(root)] == ["source-error"]
    assert not (root / RECORD_FILE).exists()
    edit_workflow(root, "text: y")
    assert [code for code, _, _ in validate(root)] == ["source-error"]
    write(root, {"helped.py": HELPED})
    edit_workflow(root, "text: z")
    assert validate(root) == [] and imports(root) == 1


def test_a_failed_import_is_never_served(root: Path) -> None:
    warmed(root)
    write(root, {"helped.py": HELPED + "\nraise RuntimeError('broken on purpose')\n"})
    assert [code for code, _, _ in validate(root)] == ["source-import-error"]
    assert imports(root) == 2 and not (root / RECORD_FILE).exists()
    edit_workflow(root, "text: z")
    assert [code for code, _, _ in validate(root)] == ["source-import-error"]
    assert imports(root) == 3  # the finding comes from the import, every time


def test_a_library_outside_the_project_edited_imports_again(root: Path, tmp_path: Path, monkeypatch) -> None:
    # An editable install or a PYTHONPATH module: recorded by its file's mtime and size.
    libs = write(tmp_path / "libs", {"outside_types.py": "TEXT = str\n"})
    monkeypatch.syspath_prepend(str(libs))
    write(root, {"helped.py": HELPED.replace("from extra import", "from outside_types import")})
    warmed(root)
    write(libs, {"outside_types.py": "TEXT = int  # now a number\n"})
    edit_workflow(root)
    assert validate(root) == [("type-mismatch", "workflows/w.yaml", 7)]
    assert imports(root) == 2


def test_a_package_installed_imports_again(root: Path, tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "venv" / "site-packages"
    site.mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    warmed(root)
    (site / "newly_installed.py").write_text("", encoding="utf-8")
    stamp = site.stat().st_mtime_ns
    os.utime(site, ns=(stamp, stamp + 1_000_000))  # a coarse clock must still show the change
    edit_workflow(root)
    assert validate(root) == [] and imports(root) == 2


def test_another_wfops_imports_again(root: Path, monkeypatch) -> None:
    warmed(root)
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "another wfops")
    edit_workflow(root)
    assert validate(root) == [] and imports(root) == 2


@pytest.mark.parametrize("command", ["compile", "check"])
def test_other_commands_import_live(root: Path, command: str) -> None:
    warmed(root)
    if command == "check":
        assert run_cli("compile", cwd=root).code == 0
        assert imports(root) == 2
    before = imports(root)
    run_cli(command, cwd=root)
    assert imports(root) == before + 1


@pytest.mark.slow
def test_a_fresh_process_after_a_workflow_edit_does_not_import(root: Path) -> None:
    def validate_process() -> dict[str, Any]:
        done = subprocess.run([*WFOPS, "validate", "--format", "json"], cwd=root, capture_output=True, text=True,
                              env=process_env(), timeout=120)
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    assert validate_process()["ok"] and imports(root) == 1
    edit_workflow(root, "text: 5")
    assert [d["code"] for d in validate_process()["diagnostics"]] == ["type-mismatch"]
    assert imports(root) == 1
    write(root, {"helper.py": HELPER + "\n# edited\n"})
    assert [d["code"] for d in validate_process()["diagnostics"]] == ["type-mismatch"]
    assert imports(root) == 2


@pytest.mark.slow
def test_a_served_validate_loads_neither_pydantic_nor_the_module(root: Path) -> None:
    # What a commit that edits only a workflow pays for: no pydantic, no user code.
    script = ("import sys\nfrom wfops.cli.main import main\ntry:\n    main(['validate'])\nexcept SystemExit:\n    pass\n"
              "print(sorted(m for m in ('pydantic', 'helped', 'helper', 'wfops.sources.python') if m in sys.modules))\n")

    def loaded() -> str:
        done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True,
                              env=process_env(), timeout=120)
        return done.stdout.splitlines()[-1]

    assert "'helped'" in loaded()
    edit_workflow(root, "text: 5")
    assert loaded() == "[]"
    assert imports(root) == 1
