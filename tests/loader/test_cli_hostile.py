"""Hostile files through the whole stack: `wfops validate --format json` reports them and exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import run_cli
from tests.loader.corpus import CASES, whole_stack_cases


def hostile_project(root: Path, raw: bytes) -> Path:
    (root / "sources.yaml").write_text("sources: {}\n")
    (root / "workflows").mkdir()
    (root / "workflows" / "x.yaml").write_bytes(raw)
    return root


@pytest.mark.parametrize("case", whole_stack_cases())
def test_validate(case: str, tmp_path: Path) -> None:
    raw, code, line, column = CASES[case]
    root = hostile_project(tmp_path, raw)
    done = run_cli("validate", "--format", "json", cwd=root)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    found = [(d["code"], d["file"], d["line"], d["column"]) for d in report["diagnostics"]]
    assert found == [(code, "workflows/x.yaml", line, column)]
    assert not (root / "MARKER").exists()
