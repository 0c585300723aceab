"""The libraries a snapshot records are the files this process loaded, as it first saw them."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from wfops.fastpath.snapshot import loaded_libraries

NAME = "wfops_test_lib_as_loaded"


def test_a_library_rewritten_after_it_was_loaded_is_recorded_as_it_ran(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "venv" / "site-packages"
    site.mkdir(parents=True)
    library = site / f"{NAME}.py"
    library.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(site))
    project = tmp_path / "project"
    project.mkdir()
    try:
        importlib.import_module(NAME)
        first = loaded_libraries(project)[str(library)]
        assert first is not None and first[1] == library.stat().st_size

        library.write_text("VALUE = 2  # an upgrade on disk; this process still runs VALUE = 1\n")
        os.utime(library, ns=(first[0] + 10**9, first[0] + 10**9))
        assert loaded_libraries(project)[str(library)] == first  # what ran, not what is on disk now

        del sys.modules[NAME]  # imported anew: the new file is what runs
        importlib.import_module(NAME)
        assert loaded_libraries(project)[str(library)] == [first[0] + 10**9, library.stat().st_size]
    finally:
        # A module left loaded whose file changed would make every later snapshot of this
        # process miss.
        sys.modules.pop(NAME, None)
