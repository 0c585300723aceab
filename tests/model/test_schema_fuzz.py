"""Structured fuzzing: schema-shaped but wrong data never crashes `load_project`'s diagnostics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import finishes
from wfops.loader.project import load_project

KEYS = ["name", "id", "uses", "with", "save", "next", "on", "retry", "attempts", "catch", "if", "then",
        "else", "foreach", "workflow", "interrupt", "end", "mode", "state", "reducer", "steps", "kind",
        "command", "url", "sources", "bindings", "drift", "ok", "eq", "and", "std", "x", "[key]", "str"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
    ["std.echo", "state.x", "$state.x", "end", "a", "", "Bad Id", "python", "mcp", "fail", "parallel"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=25)
STEP = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6)
WORKFLOW = st.fixed_dictionaries({"name": st.sampled_from(["w", "W x", 3])},
                                 optional={"steps": st.lists(st.one_of(STEP, VALUES), max_size=4),
                                           "state": VALUES, "start": VALUES, "input": VALUES})
FILE = st.one_of(WORKFLOW, st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=5))

# deadline=None: a per-example time limit is a wall-clock assertion (bench/ measures speed);
# `finishes` keeps a hang guard.
FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("schema-fuzz")
    for sub in ("workflows", "deployments"):
        (root / sub).mkdir()
    return root


@pytest.mark.slow  # hundreds of generated examples
@FUZZ
@given(FILE, st.sampled_from(["sources.yaml", "workflows/w.yaml", "deployments/d.yaml"]))
def test_schema_diagnostics_never_crash(root: Path, data: dict, rel: str) -> None:
    for old in (root / "sources.yaml", root / "workflows" / "w.yaml", root / "deployments" / "d.yaml"):
        old.unlink(missing_ok=True)
    (root / rel).write_text(json.dumps(data))  # JSON is YAML 1.2
    project = finishes(lambda: load_project(root))
    for d in project.diagnostics:
        assert d.file == rel and d.line == 1 and d.column >= 1 and d.code and d.message and d.hint
