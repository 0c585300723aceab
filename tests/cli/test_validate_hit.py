"""A whole-project `wfops validate` whose inputs did not change prints the stored report:
the same bytes and exit code as the full path, in every format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import run_cli
from wfops.fastpath import replay

# Errors (an unknown source, a broken test file), a warning (an unreachable step) and a clean file.
FILES = {
    "workflows/bad.yaml": "name: bad\nsteps:\n  - id: a\n    uses: nope.x\n    next: end\n",
    "workflows/odd.yaml": "name: odd\nsteps:\n  - id: a\n    end: x\n  - id: z\n    end: y\n",
    "workflows/ok.yaml": "name: ok\nsteps:\n  - id: a\n    end: x\n",
    "tests/w.wftest.yaml": "workflow: ok\ncases: oops\n",
}


def full_path(root: Path, *args: str) -> tuple[int, str, str]:
    """What `validate` prints with the cache gone (the checks run)."""
    (root / replay.CACHE_FILE).unlink(missing_ok=True)
    done = run_cli("validate", *args, cwd=root)
    return done.code, done.stdout, done.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_hit_prints_what_the_checks_print(make_project, fmt: str) -> None:
    root = make_project(FILES)
    missed = full_path(root, "--format", fmt)
    assert missed[0] == 1 and missed[1]
    replayed = replay.replay(root, fmt)
    assert (replayed is not None) == (fmt in ("text", "json"))  # github/sarif: the findings are rebuilt
    hit = run_cli("validate", "--format", fmt, cwd=root)
    assert (hit.code, hit.stdout, hit.stderr) == missed


@pytest.mark.parametrize("name", ["workflows/ok.yaml", "workflows/odd.yaml"], ids=["clean", "a warning"])
def test_a_project_without_errors_hits_with_exit_0(make_project, name: str) -> None:
    root = make_project({name: FILES[name]})
    missed = full_path(root)
    assert missed[0] == 0 and ("warning[" in missed[1]) == (name == "workflows/odd.yaml")
    assert replay.replay(root, "text") == (missed[1], True)
    hit = run_cli("validate", cwd=root)
    assert (hit.code, hit.stdout, hit.stderr) == missed


def test_project_option_and_a_subdirectory_hit_the_same_project(make_project) -> None:
    root = make_project(FILES)
    missed = full_path(root)
    (root / "workflows" / "deep").mkdir()
    from_below = run_cli("validate", cwd=root / "workflows" / "deep")
    by_option = run_cli("validate", "--project", str(root), cwd=root.parent)
    assert (from_below.code, from_below.stdout) == (by_option.code, by_option.stdout) == missed[:2]


@pytest.mark.parametrize("change", ["workflow edited", "test file added", "old cache entry"])
def test_a_changed_input_is_not_replayed(make_project, change: str) -> None:
    root = make_project(FILES)
    full_path(root)
    assert replay.replay(root, "text") is not None
    if change == "workflow edited":
        write(root, {"workflows/bad.yaml": FILES["workflows/ok.yaml"].replace("name: ok", "name: bad")})
    elif change == "test file added":
        write(root, {"tests/more/x.wftest.yaml": "workflow: ok\ncases: []\n"})
    else:  # an entry written before reports were kept: the findings are rebuilt, nothing replayed
        entry = (root / replay.CACHE_FILE).read_text(encoding="utf-8")
        (root / replay.CACHE_FILE).write_text(entry.replace('"replay"', '"other"'), encoding="utf-8")
    assert replay.replay(root, "text") is None
    done = run_cli("validate", cwd=root)
    assert (done.code, done.stdout) == full_path(root)[:2]


def test_paths_are_answered_by_the_full_path(make_project) -> None:
    root = make_project(FILES)
    full_path(root)
    done = run_cli("validate", "workflows/ok.yaml", cwd=root)
    assert done.code == 0 and "bad.yaml" not in done.stdout
