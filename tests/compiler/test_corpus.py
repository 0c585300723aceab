"""Each corpus file is a broken workflow whose header says what must be found:
`# expect: <code> <line> <column>`, one line per finding, nothing more, nothing less."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import wfops.loader.project as project_loader
from tests.compiler.conftest import CORPUS, codes
from wfops.compiler.artifact import ArtifactSet
from wfops.compiler.validate import validate_project

CASES = sorted(CORPUS.glob("*.yaml"))


def expected(path: Path) -> list[tuple[str, int, int]]:
    found = re.findall(r"^# expect: ([a-z-]+) (\d+) (\d+)$", path.read_text(), re.M)
    return sorted((code, int(line), int(col)) for code, line, col in found)


def models_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the plain loader unsure of every file: the pydantic models load them all."""
    monkeypatch.setattr(project_loader, "plain_load", lambda kind, data: None)


# Each file is loaded by the plain loader, or (`models`) by the pydantic models when it is
# unsure: the checks must find the same either way.
@pytest.mark.parametrize("models", [False, True], ids=["plain", "models"])
@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(project, case: Path, models: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if models:
        models_only(monkeypatch)
    want = expected(case)
    assert want, f"{case.name} has no `# expect:` header"
    root = project({f"workflows/{case.name}": case.read_text()})
    found = [d for d in validate_project(root).diagnostics if d.file == f"workflows/{case.name}"]
    assert codes(found) == want, "\n".join(f"{d.code} {d.line}:{d.column} {d.message}" for d in found)
    for d in found:
        assert d.hint, f"{d.code} has no hint"


def test_fixture_project_is_clean(project) -> None:
    """Without corpus files the fixture itself has no findings (so every finding above is the case's)."""
    assert validate_project(project()).diagnostics == []


def test_every_documented_code_has_a_case() -> None:
    wanted = {"duplicate-step", "invalid-start", "unknown-target", "unrouted-outcome", "undeclared-outcome",
              "unreachable-step", "unknown-source", "unknown-capability", "unknown-workflow",
              "subworkflow-cycle", "invalid-path", "path-not-allowed", "unknown-state-field", "type-mismatch",
              "missing-input", "unknown-input", "unknown-output-field", "foreach-not-array", "invalid-schema",
              "contract-unknown", "invalid-reducer"}
    covered = {code for case in CASES for code, _, _ in expected(case)}
    assert wanted <= covered, wanted - covered


def test_the_worked_examples_give_the_same_findings_and_artifacts_from_either_loader(
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parents[2]
    plain = validate_project(root)
    models_only(monkeypatch)
    models = validate_project(root)
    assert plain.diagnostics == models.diagnostics
    workflows = {name: loaded.model for name, loaded in plain.project.workflows.items()}
    via_models = {name: loaded.model for name, loaded in models.project.workflows.items()}
    assert {name: ArtifactSet(workflows).hash_of(name) for name in workflows} == \
        {name: ArtifactSet(via_models).hash_of(name) for name in via_models}
