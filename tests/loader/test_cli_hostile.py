"""Hostile files through the whole stack: `wfops validate --format json` reports them and exits 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.loader.corpus import CASES
from wfops.cli.main import main

SUBPROCESS_CASES = ["python-object-apply", "python-object-apply-root", "billion-laughs", "too-deep-100k",
                    "file-too-large", "non-utf8", "nul-byte", "duplicate-key", "root-list", "empty-file"]


def hostile_project(root: Path, raw: bytes) -> Path:
    (root / "sources.yaml").write_text("sources: {}\n")
    (root / "workflows").mkdir()
    (root / "workflows" / "x.yaml").write_bytes(raw)
    return root


@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_validate_subprocess(case: str, tmp_path: Path) -> None:
    raw, code, line, column = CASES[case]
    root = hostile_project(tmp_path, raw)
    done = subprocess.run([sys.executable, "-m", "wfops", "validate", "--format", "json"], cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    found = [(d["code"], d["file"], d["line"], d["column"]) for d in report["diagnostics"]]
    assert found == [(code, "workflows/x.yaml", line, column)]
    assert not (root / "MARKER").exists()


@pytest.mark.parametrize("case", sorted(set(CASES) - set(SUBPROCESS_CASES)))
def test_validate_in_process(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw, code, line, column = CASES[case]
    root = hostile_project(tmp_path, raw)
    with pytest.raises(SystemExit) as done:
        main(["validate", "--format", "json", "--project", str(root)])
    out, err = capsys.readouterr()
    assert done.value.code == 1, err
    found = [(d["code"], d["line"], d["column"]) for d in json.loads(out)["diagnostics"]]
    assert found == [(code, line, column)]
