"""A python source that calls sys.exit() while being imported is a finding, not the end of wfops."""

from __future__ import annotations

from tests.conftest import write
from tests.harness import run_cli


def test_sys_exit_at_import_is_a_source_import_error(tmp_path) -> None:
    write(tmp_path, {
        "quitter.py": "import sys\nsys.exit(3)\n",
        "sources.yaml": "sources:\n  q: {kind: python, module: quitter}\n",
    })
    done = run_cli("validate", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert '"source-import-error"' in done.stdout and "SystemExit" in done.stdout
    assert "Traceback" not in done.stderr
