"""Every hostile case: exactly one diagnostic, the right code and position, no blow-up, and nothing runs.

(How fast a refusal is belongs in bench/; `finishes` only guards against a hang.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import finishes
from tests.loader.corpus import CASES, loader_cases, whole_stack_cases
from wfops.loader.project import load_project
from wfops.loader.yaml import YamlLoadError, load_yaml_bytes, load_yaml_file


@pytest.mark.parametrize("case", loader_cases())
def test_loader_refuses(case: str) -> None:
    raw, code, line, column = CASES[case]
    with pytest.raises(YamlLoadError) as info:
        finishes(lambda: load_yaml_bytes(raw, "workflows/x.yaml"))
    d = info.value.diagnostic
    assert (d.code, d.line, d.column) == (code, line, column), d
    assert d.severity == "error" and d.file == "workflows/x.yaml"
    assert len(d.message) < 200 and "\n" not in d.message


@pytest.mark.parametrize("case", whole_stack_cases())
def test_project_reports_exactly_one_diagnostic(case: str, make_project) -> None:
    raw, code, line, column = CASES[case]
    root = make_project({})
    (root / "workflows").mkdir()
    (root / "workflows" / "x.yaml").write_bytes(raw)
    project = finishes(lambda: load_project(root))
    found = [(d.code, d.file, d.line, d.column) for d in project.diagnostics]
    assert found == [(code, "workflows/x.yaml", line, column)]
    assert project.workflows == {} and project.broken_files == {"workflows/x.yaml"}


def test_python_tags_run_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for case in ("python-object-apply", "python-object-apply-root"):
        with pytest.raises(YamlLoadError):
            load_yaml_bytes(CASES[case][0], "x.yaml")
    assert not (tmp_path / "MARKER").exists()


def test_no_expansion_of_laughs_even_partially() -> None:
    # A single anchor is refused before anything can reference it.
    with pytest.raises(YamlLoadError) as info:
        load_yaml_bytes(CASES["billion-laughs"][0], "x.yaml")
    assert "&a" in info.value.diagnostic.message


def test_surrogate_in_text_is_an_encoding_error() -> None:
    from wfops.loader.yaml import load_yaml_text

    with pytest.raises(YamlLoadError) as info:
        load_yaml_text("name: a\nx: \ud800\n", "x.yaml")
    d = info.value.diagnostic
    assert (d.code, d.line, d.column) == ("yaml-encoding", 2, 4)


def test_file_errors(tmp_path: Path) -> None:
    cases = {
        "missing": (tmp_path / "nope.yaml", "file-missing"),
        "directory": (tmp_path, "file-missing"),
    }
    fifo = tmp_path / "pipe.yaml"
    import os

    os.mkfifo(fifo)
    cases["fifo"] = (fifo, "file-unreadable")
    for name, (path, code) in cases.items():
        with pytest.raises(YamlLoadError) as info:
            load_yaml_file(path, "shown.yaml")
        assert info.value.diagnostic.code == code, name
        assert info.value.diagnostic.file == "shown.yaml"


def test_yaml_1_2_meanings() -> None:
    doc = load_yaml_bytes(
        b"a: on\nb: yes\nc: 0755\nd: 2001-12-14\ne: 1.10\nf: 0x1F\ng: 0o17\nh: ~\ni: True\n"
        b"j: !!str 12\nk: !!float 3\nl: '1'\n1: int-looking key\n", "x.yaml")
    assert doc.data == {"a": "on", "b": "yes", "c": 755, "d": "2001-12-14", "e": 1.1, "f": 31,
                        "g": 15, "h": None, "i": True, "j": "12", "k": 3.0, "l": "1",
                        "1": "int-looking key"}


def test_bom_and_crlf_accepted_with_positions() -> None:
    doc = load_yaml_bytes(b"\xef\xbb\xbfname: a\r\nsteps:\r\n  - id: s\r\n", "x.yaml")
    assert doc.data == {"name": "a", "steps": [{"id": "s"}]}
    assert doc.at(("steps", 0, "id")) == (3, 9)
    assert doc.at(("steps", 0, "id"), key=True) == (3, 5)


def test_positions_count_characters_not_bytes() -> None:
    doc = load_yaml_bytes("ü: {é: [1, 😀, x]}\n".encode(), "x.yaml")
    assert doc.at(("ü", "é", 2)) == (1, 15)
