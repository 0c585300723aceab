"""Acceptance: python sources as a user writes them, seen through `wfops validate`,
`wfops caps` and `wfops run`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import CliResult, run_cli
from tests.lock.weekly_project import weekly_project

NODE = '''
import wfops
from pydantic import BaseModel


class In(BaseModel):
    path: str


@wfops.node({decorator})
def read_notes(payload: In) -> In:
    return payload
'''


def wfops(root: Path, *args: str) -> CliResult:
    done = run_cli(*args, cwd=root)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done


def validate_json(root: Path) -> tuple[int, list[dict]]:
    done = wfops(root, "validate", "--format", "json")
    return done.returncode, json.loads(done.stdout)["diagnostics"]


@pytest.mark.parametrize("decorator", ['outcomes="ok"', 'outcomes=["ok", "not found"]', 'outcomes=["ok", 3]',
                                       'outcomes=[]', 'outcomes=["ok", "ok"]', 'outcomes=[["ok"]]'])
def test_malformed_outcomes_are_a_source_error_at_the_declaration(tmp_path: Path, decorator: str) -> None:
    root = weekly_project(tmp_path / "p")
    write(root, {"weekly/ops.py": NODE.replace("{decorator}", decorator)})
    code, found = validate_json(root)
    assert code == 1
    assert [(d["code"], d["file"], d["line"]) for d in found] == [("source-error", "sources.yaml", 4)]
    assert "`outcomes` must be a non-empty list" in found[0]["message"]
    assert "outcomes=[" in found[0]["hint"]


def test_docstrings_and_field_descriptions_are_the_capability_docs(tmp_path: Path) -> None:
    root = weekly_project(tmp_path / "p")
    shown = wfops(root, "caps", "show", "report.extract_report")
    assert shown.returncode == 0, shown.stderr
    assert "the first line is the title" in shown.stdout
    assert "ok, empty" in shown.stdout
    read = wfops(root, "caps", "show", "report.read_notes")
    assert "Notes file, relative to the project root." in read.stdout


def test_non_ok_outcome_without_output_saves_nothing_and_routes(tmp_path: Path) -> None:
    root = weekly_project(tmp_path / "p")
    write(root, {"empty.md": "\n\n"})
    assert wfops(root, "compile").returncode == 0
    done = wfops(root, "run", "weekly-report.local", "--input", "path=empty.md", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert (run["status"], run["outcome"], run["output"]) == ("completed", "empty",
                                                              {"report": None, "markdown": None})


MODEL = '''
import wfops
from typing import Callable
from pydantic import BaseModel


class In(BaseModel):
    path: str
    {field}


class Out(BaseModel):
    text: str


@wfops.node
def read_notes(payload: In) -> Out:
    return Out(text=payload.path)
'''


@pytest.mark.parametrize(("field", "words"), [
    ('ratio: float = float("nan")', "not JSON (NaN or infinity)"),
    ('limit: float = float("inf")', "not JSON (NaN or infinity)"),
    ("hook: Callable[[int], int] = print", "has no JSON Schema"),
])
def test_a_model_without_a_json_contract_is_a_source_error_not_a_crash(tmp_path: Path, field: str,
                                                                         words: str) -> None:
    root = weekly_project(tmp_path / "p")
    write(root, {"weekly/ops.py": MODEL.replace("{field}", field)})
    code, found = validate_json(root)
    assert code == 1
    assert [(d["code"], d["file"]) for d in found] == [("source-error", "sources.yaml")]
    assert words in found[0]["message"] and "input model In" in found[0]["message"]
    assert "\n" not in found[0]["message"]
    for verb in ("compile", "check"):
        done = wfops(root, verb)  # `wfops` asserts there is no traceback / internal error
        assert done.returncode == 1


def test_caps_on_a_source_that_fails_to_import_says_so(tmp_path: Path) -> None:
    root = weekly_project(tmp_path / "p")
    with (root / "weekly/ops.py").open("a") as handle:
        handle.write('\nraise ValueError("broken on purpose")\n')
    for args in (("caps", "list", "--source", "report"), ("caps", "show", "report.read_notes")):
        done = wfops(root, *args)
        assert done.returncode == 1
        assert "broken on purpose" in done.stderr
        assert "source 'report' is declared but could not be loaded" in done.stderr
        assert "unknown source" not in done.stderr


def test_prints_in_user_code_never_corrupt_machine_output(tmp_path: Path) -> None:
    root = weekly_project(tmp_path / "p")
    ops = (root / "weekly/ops.py").read_text()
    ops = 'print("printed at import")\n' + ops.replace('    """Read the notes file."""',
                                                    '    """Read the notes file."""\n    print("printed by a node")')
    ops = ops.replace("async def extract_report", "async def extract_report_unused") + '''

@wfops.node(outcomes=["ok", "empty"])
async def extract_report(payload: ExtractIn) -> wfops.Result[Report]:
    print("printed by an async node")
    return Report(title="t", items=[])
'''
    (root / "weekly/ops.py").write_text(ops)
    for args in (("validate", "--format", "json"), ("check", "--format", "json"), ("compile", "--format", "json"),
                 ("check", "--format", "sarif"), ("caps", "show", "report.read_notes", "--json")):
        # Each import's print is looked for, so no record may spare the import (caps show
        # would read the contracts validate recorded).
        shutil.rmtree(root / ".wfops" / "cache", ignore_errors=True)
        done = wfops(root, *args)
        json.loads(done.stdout)  # nothing but the JSON document
        assert "printed at import" in done.stderr
    ran = wfops(root, "run", "weekly-report.local", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["status"] == "completed"
    assert "printed by a node" in ran.stderr and "printed by an async node" in ran.stderr
