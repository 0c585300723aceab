"""Each corpus file is a broken workflow whose header says what must be found:
`# expect: <code> <line> <column>`, one line per finding, nothing more, nothing less."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.compiler.conftest import CORPUS, codes
from wfops.compiler.validate import validate_project

CASES = sorted(CORPUS.glob("*.yaml"))


def expected(path: Path) -> list[tuple[str, int, int]]:
    found = re.findall(r"^# expect: ([a-z-]+) (\d+) (\d+)$", path.read_text(), re.M)
    return sorted((code, int(line), int(col)) for code, line, col in found)


# plain: the checks read the plain objects `wfops validate` loads (wfops.model.objects) or the
# pydantic models the other commands load; they must find the same either way.
@pytest.mark.parametrize("plain", [False, True], ids=["models", "plain"])
@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(project, case: Path, plain: bool) -> None:
    want = expected(case)
    assert want, f"{case.name} has no `# expect:` header"
    root = project({f"workflows/{case.name}": case.read_text()})
    found = [d for d in validate_project(root, plain=plain).diagnostics if d.file == f"workflows/{case.name}"]
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


def test_the_worked_examples_give_the_same_findings_from_either_loader() -> None:
    root = Path(__file__).resolve().parents[2]
    models, plain = validate_project(root), validate_project(root, plain=True)
    assert plain.diagnostics == models.diagnostics
    assert all(type(loaded.model).__module__ == "wfops.model.objects" for loaded in plain.project.workflows.values())
