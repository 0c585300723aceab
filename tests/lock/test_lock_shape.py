"""A lock bent out of shape by a hand edit or a bad merge: an unknown top-level key, or a
key given twice (JSON readers keep the last of two, so a whole section could vanish
unseen). `wfops check` and `wfops run` refuse both as `corrupt-lock`, like any corrupt lock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness import run_cli


def _closing(text: str, extra: str) -> str:
    """The lock's JSON with `extra` added as the last members of its top-level object."""
    body = text.rstrip()
    assert body.endswith("}")
    return body[:-1].rstrip() + f",\n  {extra}\n}}\n"


BENDS: list[tuple[str, Callable[[str], str], str]] = [
    ("extra-top-level-key", lambda text: _closing(text, '"extra": true'),
     "wfops.lock is corrupt: unknown top-level key `extra` (a lock has only `version`, `workflows`, "
     "`deployments`, `sources`)"),
    # The later `workflows` is the one a plain JSON reader keeps: the lock would read as
    # having no workflows at all ("workflow `hello` is not in wfops.lock").
    ("duplicate-workflows", lambda text: _closing(text, '"workflows": {}'),
     "wfops.lock is corrupt: the key `workflows` appears twice in one object"),
    ("duplicate-nested-key", lambda text: text.replace('"hash":', '"hash": "0", "hash":', 1),
     "wfops.lock is corrupt: the key `hash` appears twice in one object"),
]


@pytest.mark.parametrize(("bend", "message"), [(b, m) for _, b, m in BENDS], ids=[i for i, _, _ in BENDS])
def test_check_and_run_refuse_a_bent_lock_as_corrupt(project: Path, bend: Callable[[str], str],
                                                     message: str) -> None:
    compiled = run_cli("compile", "--project", str(project))
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    lock = project / "wfops.lock"
    lock.write_text(bend(lock.read_text()))

    checked = run_cli("check", "--project", str(project))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert f"wfops.lock:1:1: error[corrupt-lock] {message}" in checked.stdout

    ran = run_cli("run", "hello.local", "--project", str(project))
    assert ran.returncode != 0, ran.stdout + ran.stderr
    assert "error[corrupt-lock]" in ran.stdout + ran.stderr and message in ran.stdout + ran.stderr
    assert "is not in wfops.lock" not in ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
