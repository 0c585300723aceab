"""Where a project's workflow test files are (`tests/**/*.wftest.yaml`): names only, nothing read.

Apart from the loader, so that the validate cache key lists them without loading the loader.
"""

from __future__ import annotations

from pathlib import Path

TESTS_DIR = "tests"
SUFFIXES = (".wftest.yaml", ".wftest.yml")


def is_test_file(path: Path) -> bool:
    return path.name.endswith(SUFFIXES)


def walk_test_files(directory: Path) -> list[Path]:
    """The test files below `directory`, sorted; hidden folders are skipped."""
    found: list[Path] = []
    for path in sorted(directory.rglob("*.wftest.y*ml")):
        if is_test_file(path) and path.is_file() and not any(p.startswith(".") for p in path.parts[-8:-1]):
            found.append(path)
    return found


def project_test_files(root: Path) -> list[Path]:
    """The project's own test files (under its `tests/` folder), as resolved paths."""
    root = root.resolve()
    return walk_test_files(root / TESTS_DIR) if (root / TESTS_DIR).is_dir() else []
