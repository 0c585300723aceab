"""Find and load workflow test files (`tests/**/*.wftest.yaml`, docs/testing.md).

Each file is read with the project's one YAML loader (positions recorded) and checked
against `wfops.model.wftest.TestFile`; problems become diagnostics at file:line:col.
"""

from __future__ import annotations

from pathlib import Path

from wfops.diagnostics import Diagnostic, error
from wfops.errors import UsageError
from wfops.loader.guard import inside_project, relative_name
from wfops.loader.project import Loaded, validate_document
from wfops.loader.testfiles import is_test_file, project_test_files, walk_test_files


def find_test_files(root: Path, paths: list[str] | None = None, *, base: Path | None = None) -> list[Path]:
    """The test files under `paths` (files or folders, relative to `base`, each inside the
    project: `UsageError` otherwise), default the project's `tests/` folder, recursively."""
    root = root.resolve()
    if not paths:
        return project_test_files(root)
    files: list[Path] = []
    for raw in paths:
        where = inside_project(root, raw, base=base, what="test path", argument="paths")
        if where.is_dir():
            files.extend(walk_test_files(where))
        elif not is_test_file(where):
            raise UsageError(f"{raw} is not a workflow test file",
                             hint="test files are named *.wftest.yaml; give one, or a folder holding them")
        else:
            files.append(where)  # a missing file is reported when it is loaded
    return list(dict.fromkeys(files))


def load_test_files(root: Path, files: list[Path]) -> tuple[list[Loaded], list[Diagnostic]]:
    """Each file parsed and schema-checked; a file that does not load is left out with its findings."""
    if not files:  # a project without test files does not build the test-file models
        return [], []
    # deferred: record-hit path, which only lists test files
    from wfops.loader.yaml import YamlLoadError, load_yaml_file
    from wfops.model.wftest import TestFile  # deferred: pydantic (~35 ms), for test files only

    loaded: list[Loaded] = []
    diagnostics: list[Diagnostic] = []
    for path in files:
        rel = relative_name(root, path.resolve()) if path.resolve().is_relative_to(root.resolve()) else str(path)
        if not path.is_file():
            diagnostics.append(error("file-missing", f"{rel}: no such test file", rel,
                                     hint="test files are named *.wftest.yaml"))
            continue
        try:
            doc = load_yaml_file(path, rel)
        except YamlLoadError as exc:
            diagnostics.append(exc.diagnostic)
            continue
        parsed, problems = validate_document(doc, TestFile)
        diagnostics.extend(problems)
        if parsed is not None:
            loaded.append(Loaded(rel, doc, parsed))
    return loaded, diagnostics
