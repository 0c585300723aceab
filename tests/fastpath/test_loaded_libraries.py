"""The libraries a snapshot records are the files this process loaded, as it first saw them."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from wfops.fastpath.snapshot import loaded_libraries


def test_a_library_rewritten_after_it_was_loaded_is_recorded_as_it_ran(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "venv" / "site-packages"
    site.mkdir(parents=True)
    library = site / "wfops_test_lib_as_loaded.py"
    library.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "wfops_test_lib_as_loaded", raising=False)
    importlib.import_module("wfops_test_lib_as_loaded")
    project = tmp_path / "project"
    project.mkdir()
    first = loaded_libraries(project)[str(library)]
    assert first is not None and first[1] == library.stat().st_size

    library.write_text("VALUE = 2  # an upgrade on disk; this process still runs VALUE = 1\n")
    os.utime(library, ns=(first[0] + 10**9, first[0] + 10**9))
    assert loaded_libraries(project)[str(library)] == first  # what ran, not what is on disk now
