"""The validate cache replays findings only while every input is unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import process_env
from wfops.api.validate import project_diagnostics
from wfops.compiler.validate import validate_project
from wfops.fastpath import cache, replay, snapshot

HELPER_SOURCES = "sources:\n  nodes: {kind: python, module: nodes}\n  helped: {kind: python, module: helped}\n"
HELPED = "from pydantic import BaseModel\nimport wfops\nfrom helper import Out\n\n" \
         "class In(BaseModel):\n    text: str\n\n@wfops.node\ndef run(payload: In) -> Out:\n    return Out(n=1)\n"
HELPER = "from pydantic import BaseModel\n\nclass Out(BaseModel):\n    n: int\n"
WF = "name: w\nstate:\n  n: {type: integer}\nsteps:\n  - id: a\n    uses: helped.run\n    with: {text: x}\n" \
     "    save: {n: state.n}\n    next: end\n"


def hit(root: Path) -> bool:
    return cache.lookup(root) is not None


@pytest.fixture(autouse=True)
def stable_tool(monkeypatch) -> None:
    """Other work on the wfops code itself must not turn a hit into a miss mid-test."""
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "this wfops")


@pytest.fixture
def warmed(project):
    root = project({"sources.yaml": HELPER_SOURCES, "helped.py": HELPED, "helper.py": HELPER,
                    "workflows/w.yaml": WF, "deployments/d.yaml": "name: d\nworkflow: w\n",
                    "wfops.lock": '{"version": 1, "workflows": {}, "deployments": {}, "sources": {}}\n'})
    assert project_diagnostics(root)[0] == []
    assert hit(root)
    return root


EDITS = {
    "workflow edited": lambda r: write(r, {"workflows/w.yaml": WF.replace("text: x", "text: y")}),
    "workflow added": lambda r: write(r, {"workflows/v.yaml": WF.replace("name: w", "name: v")}),
    "workflow removed": lambda r: (r / "workflows/w.yaml").unlink(),
    "deployment edited": lambda r: write(r, {"deployments/d.yaml": "name: d\nworkflow: w\nsecrets: [X]\n"}),
    "sources.yaml edited": lambda r: write(r, {"sources.yaml": HELPER_SOURCES + "  x: {kind: python, module: nodes}\n"}),
    "python source edited": lambda r: write(r, {"helped.py": HELPED + "\n# changed\n"}),
    "module it imports edited": lambda r: write(r, {"helper.py": HELPER.replace("n: int", "n: str")}),
    "lock edited": lambda r: write(r, {"wfops.lock": '{"version": 1, "workflows": {}, "deployments": {}, '
                                                    '"sources": {"x": {}}}\n'}),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_every_input_change_misses(warmed: Path, edit: str) -> None:
    EDITS[edit](warmed)
    assert not hit(warmed)
    assert project_diagnostics(warmed)[0] == validate_project(warmed).diagnostics
    assert hit(warmed)


def test_python_edit_changes_the_result(warmed: Path) -> None:
    EDITS["module it imports edited"](warmed)
    from wfops.sources.python import forget_project_modules

    forget_project_modules(warmed)
    found = project_diagnostics(warmed)[0]
    assert [(d.code, d.line, d.column) for d in found] == [("type-mismatch", 8, 15)]
    assert [(d.code, d.line) for d in project_diagnostics(warmed)[0]] == [("type-mismatch", 8)]  # replayed


def test_wfops_code_change_misses(warmed: Path, monkeypatch) -> None:
    monkeypatch.setattr(snapshot, "_tool_fingerprint", lambda: "another wfops")
    assert not hit(warmed)


def test_unchanged_comment_free_run_hits_and_replays_exactly(project) -> None:
    root = project({"workflows/b.yaml": "name: b\nsteps:\n  - id: a\n    end: x\n  - id: z\n    end: y\n"})
    first = project_diagnostics(root)[0]
    assert first and project_diagnostics(root)[0] == first


def test_corrupt_cache_is_a_miss(warmed: Path) -> None:
    (warmed / replay.CACHE_FILE).write_text("{oops", encoding="utf-8")
    assert not hit(warmed)
    assert project_diagnostics(warmed)[0] == []


@pytest.mark.slow
def test_a_hit_loads_no_yaml_parser_schema_library_or_user_code(project) -> None:
    # Fresh interpreters: the point is what a process has imported.
    root = project({"workflows/w.yaml": "name: w\nsteps:\n  - id: a\n    end: x\n"})
    script = ("import sys\nfrom wfops.cli.main import main\ntry:\n    main(['validate', '--format', 'json'])\n"
              "except SystemExit:\n    pass\nprint(sorted(m for m in ('ruamel', 'jsonschema', 'nodes', 'wfops.model.workflow') "
              "if m in sys.modules))\n")
    env = process_env()
    runs = [subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, env=env,
                           timeout=60) for _ in range(2)]
    assert "'ruamel'" in runs[0].stdout.splitlines()[-1]
    assert runs[1].stdout.splitlines()[-1] == "[]", runs[1].stdout


def test_unrelated_files_keep_the_hit(warmed: Path) -> None:
    write(warmed, {"README.md": "# notes\n", "scripts/tool.py": "print('not imported by a source')\n",
                   "examples/other.yaml": "a: 1\n"})
    assert hit(warmed)


def codes(root: Path) -> list[str]:
    """What `wfops validate` reports now, as a fresh process would see the python files."""
    from wfops.sources.python import forget_project_modules

    forget_project_modules(root)
    return [d.code for d in project_diagnostics(root)[0]]


def source_fails(root: Path) -> bool:
    return any(code in ("source-error", "source-import-error") for code in codes(root))


BROKEN_HELPER_SOURCES = HELPER_SOURCES  # the fixture's `nodes` and the `helped` under test


def test_a_fixed_import_error_is_not_replayed(project) -> None:
    root = project({"sources.yaml": BROKEN_HELPER_SOURCES, "helped.py": HELPED + "\nimport no_such_lib_x\n",
                    "helper.py": HELPER, "workflows/w.yaml": WF})
    assert source_fails(root)
    assert source_fails(root) and hit(root)
    write(root, {"helped.py": HELPED})
    assert not hit(root)
    assert codes(root) == []


def test_a_module_created_after_the_error_is_seen(project) -> None:
    # helped.py imports `helper`, which does not exist yet: creating it must miss the cache.
    root = project({"sources.yaml": BROKEN_HELPER_SOURCES, "helped.py": HELPED, "workflows/w.yaml": WF})
    assert source_fails(root) and hit(root)
    write(root, {"helper.py": HELPER})
    assert not hit(root)
    assert codes(root) == []


def test_a_declared_module_created_later_is_seen(project) -> None:
    root = project({"sources.yaml": BROKEN_HELPER_SOURCES, "workflows/w.yaml": WF})
    assert source_fails(root) and hit(root)
    write(root, {"helped.py": HELPED, "helper.py": HELPER})
    assert not hit(root)
    assert codes(root) == []


def test_an_edited_transitive_import_is_seen(project) -> None:
    # helped -> helper -> deeper: an edit two imports away changes the output type.
    deeper = "from pydantic import BaseModel\n\nclass Out(BaseModel):\n    n: int\n"
    root = project({"sources.yaml": BROKEN_HELPER_SOURCES, "helped.py": HELPED,
                    "helper.py": "from deeper import Out\n", "deeper.py": deeper, "workflows/w.yaml": WF})
    assert codes(root) == [] and hit(root)
    write(root, {"deeper.py": deeper.replace("n: int", "n: str")})
    assert not hit(root)
    assert codes(root) == ["type-mismatch"]


def test_a_package_appearing_where_an_import_looked_misses(project) -> None:
    # `import helper` failed; a package folder `helper/` (not a module file) now provides it.
    root = project({"sources.yaml": BROKEN_HELPER_SOURCES, "helped.py": HELPED, "workflows/w.yaml": WF})
    assert source_fails(root) and hit(root)
    write(root, {"helper/__init__.py": HELPER})
    assert not hit(root)
    assert codes(root) == []


def test_the_key_is_sha256_without_hashlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A hit hashes with the C module hashlib falls back to, not hashlib (OpenSSL); a process that
    # loaded hashlib already (a run) uses OpenSSL's: the same digests either way.
    import hashlib

    data = bytes(range(256)) * 300
    (tmp_path / "f").write_bytes(data)
    assert snapshot.file_hash(tmp_path / "f") == hashlib.sha256(data).hexdigest()
    monkeypatch.delitem(sys.modules, "hashlib")
    assert snapshot.file_hash(tmp_path / "f") == hashlib.sha256(data).hexdigest()
    assert snapshot.file_hash(tmp_path / "missing") is None
