"""load_project over real directories: what it loads, what it refuses, and that it never raises."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wfops.errors import ProjectNotFound
from wfops.exits import for_error
from wfops.loader.project import find_root, load_project, project_db_path

GOOD = "name: {name}\nsteps:\n  - id: a\n    end: ok\n"


def test_loads_files_and_reports_duplicates(make_project) -> None:
    root = make_project({
        "workflows/a.yaml": GOOD.format(name="one"),
        "workflows/b.yml": GOOD.format(name="one"),
        "workflows/notes.txt": "ignored",
        "deployments/d.yaml": "name: d\nworkflow: one\n",
    })
    project = load_project(root)
    assert sorted(project.workflows) == ["one"] and project.workflows["one"].file == "workflows/a.yaml"
    assert sorted(project.deployments) == ["d"] and project.sources is not None
    assert [(d.code, d.file, d.line, d.column) for d in project.diagnostics] == [
        ("duplicate-workflow", "workflows/b.yml", 1, 7)]


def test_symlink_out_of_the_project_is_refused(make_project, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.yaml"
    outside.write_text("name: secret-stuff\n")
    root = make_project({"workflows/in.yaml": GOOD.format(name="in")})
    (root / "workflows" / "x.yaml").symlink_to(outside)
    (root / "workflows" / "alias.yaml").symlink_to(root / "workflows" / "in.yaml")
    project = load_project(root)
    found = [(d.code, d.file) for d in project.diagnostics]
    assert ("file-outside-project", "workflows/x.yaml") in found
    assert "secret-stuff" not in " ".join(d.message for d in project.diagnostics)
    # A link that stays inside is read under its own name.
    assert ("duplicate-workflow", "workflows/in.yaml") in found
    assert project.workflows["in"].file == "workflows/alias.yaml"


def test_non_utf8_file_name_is_a_diagnostic(make_project) -> None:
    root = make_project({})
    (root / "workflows").mkdir()
    with open(os.fsencode(root / "workflows") + b"/\xff.yaml", "wb") as handle:
        handle.write(GOOD.format(name="x").encode())
    project = load_project(root)
    [d] = project.diagnostics
    assert d.code == "file-name-encoding" and d.file == "workflows/\ufffd.yaml"
    d.file.encode("utf-8")  # printable by every reporter


def test_special_files_are_skipped_or_refused(make_project) -> None:
    root = make_project({})
    (root / "workflows").mkdir()
    os.mkfifo(root / "workflows" / "pipe.yaml")  # listing skips it; reading would block
    (root / "workflows" / "dir.yaml").mkdir()
    (root / "workflows" / "loop.yaml").symlink_to("loop.yaml")
    (root / "workflows" / "dangling.yaml").symlink_to("nowhere.yaml")
    project = load_project(root)
    assert project.diagnostics == [] and project.workflows == {}


def test_sources_yaml_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "sources.yaml").mkdir()
    project = load_project(tmp_path)
    assert [d.code for d in project.diagnostics] == ["file-missing"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_unreadable_directory(make_project) -> None:
    root = make_project({"workflows/a.yaml": GOOD.format(name="a")})
    (root / "workflows").chmod(0)
    try:
        assert [d.code for d in load_project(root).diagnostics] == ["file-unreadable"]
    finally:
        (root / "workflows").chmod(0o755)


def test_find_root(tmp_path: Path) -> None:
    (tmp_path / "wfops.lock").write_text("{}")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_root(deep) == tmp_path.resolve()
    assert find_root(None, tmp_path) == tmp_path.resolve()
    with pytest.raises(ProjectNotFound, match="not a wfops project"):
        find_root(None, tmp_path / "a")  # an empty directory would validate as "ok", checking nothing
    with pytest.raises(ProjectNotFound):
        find_root(None, tmp_path / "missing")
    lonely = tmp_path.parent / (tmp_path.name + "-lonely")
    lonely.mkdir()
    with pytest.raises(ProjectNotFound) as info:
        find_root(lonely)
    assert for_error(info.value) == 2 and info.value.hint


def test_project_db_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WFOPS_DB", raising=False)
    assert project_db_path(tmp_path) == tmp_path / ".wfops" / "wfops.db"
    monkeypatch.setenv("WFOPS_DB", "/x/env.db")
    assert project_db_path(tmp_path) == Path("/x/env.db")
    assert project_db_path(tmp_path, "/x/flag.db") == Path("/x/flag.db")
