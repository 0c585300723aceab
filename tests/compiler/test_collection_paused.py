"""A validation runs without cyclic garbage collection (the loaded project is long-lived and
acyclic) and leaves collection as it found it, however validations nest."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from wfops.compiler import validate
from wfops.compiler.validate import validate_project

PROBE = """
import gc

from pydantic import BaseModel

import wfops

COLLECTING_AT_IMPORT = gc.isenabled()  # imported by the validation, inside it


class Empty(BaseModel):
    pass


@wfops.node
def noop(payload: Empty) -> Empty:
    return payload
"""


def test_collection_is_paused_during_a_validation_and_restored_after(tmp_path: Path) -> None:
    from wfops.sources.python import forget_project_modules

    (tmp_path / "sources.yaml").write_text("sources:\n  probe: {kind: python, module: gcprobe}\n")
    (tmp_path / "gcprobe.py").write_text(PROBE)
    assert gc.isenabled()
    try:
        assert validate_project(tmp_path).ok
        assert sys.modules["gcprobe"].COLLECTING_AT_IMPORT is False
    finally:
        forget_project_modules(tmp_path)
    assert gc.isenabled()


def test_nested_pauses_restore_the_state_before_the_first() -> None:
    with validate._collection_paused():
        with validate._collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer validation still runs
    assert gc.isenabled()
    gc.disable()
    try:
        with validate._collection_paused():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()
