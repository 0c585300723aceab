"""Property tests: whatever the bytes, the loader returns a Document or one diagnostic, never a crash."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import finishes
from wfops.loader.project import load_project
from wfops.loader.yaml import Document, YamlLoadError, load_yaml_bytes
from wfops.report import FORMATS, render

# deadline=None: a per-example time limit is a wall-clock assertion (bench/ measures speed);
# `finishes` keeps a hang guard.
FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

VALID_WORKFLOW = """\
name: fuzz
description: A workflow with every step kind.
input: {type: object, properties: {path: {type: string}}}
state:
  text: {type: string}
  items: {type: array, reducer: extend}
  done: {type: boolean}
output: {text: $state.text}
steps:
  - id: read
    uses: std.echo
    with: {value: $input.path}
    save: {value: state.text}
    retry: {attempts: 2, backoff: 0}
    next: check
  - id: check
    if: {and: [{exists: $state.text}, {ne: [$state.text, ""]}]}
    then: each
    else: stop
  - id: each
    foreach: $state.items
    uses: std.echo
    with: {value: $item}
    mode: parallel
    concurrency: 2
    next: ask
  - id: ask
    interrupt: approval
    request: {text: $state.text}
    on: {approved: end, rejected: stop}
  - id: stop
    end: rejected
"""

TOKENS = [*"ab01:- []{},&*!|>'\"#%@`?.~$\n\n  \t\\", "steps", "id", "uses", "<<", "---", "!!int",
          "!!python/name:os.system", "\u00e9", "\x00", "\ufeff"]
YAMLISH = st.lists(st.sampled_from(TOKENS), max_size=200).map("".join)


@st.composite
def mutated_workflow(draw: st.DrawFn) -> bytes:
    data = bytearray(VALID_WORKFLOW.encode())
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "duplicate-line"]))
        chunk = draw(st.binary(min_size=1, max_size=8)) if draw(st.booleans()) else \
            draw(st.sampled_from([b":", b"-", b" ", b"\n", b"&a", b"*a", b"{", b"]", b"  ", b"\t", b"'"]))
        if action == "insert":
            data[at:at] = chunk
        elif action == "delete":
            del data[at:at + len(chunk)]
        elif action == "replace":
            data[at:at + len(chunk)] = chunk
        else:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end + 1
            data[end:end] = data[start:end]
    return bytes(data)


def assert_loads_or_refuses(raw: bytes) -> None:
    try:
        doc = finishes(lambda: load_yaml_bytes(raw, "x.yaml"))
    except YamlLoadError as exc:
        d = exc.diagnostic
        assert d.severity == "error" and d.code.startswith(("yaml-", "file-"))
        assert d.line >= 1 and d.column >= 1
    else:
        assert isinstance(doc, Document) and isinstance(doc.data, dict)


@pytest.mark.slow  # hundreds of generated examples
@FUZZ
@given(st.binary(max_size=600))
def test_random_bytes(raw: bytes) -> None:
    assert_loads_or_refuses(raw)


@pytest.mark.slow  # hundreds of generated examples
@FUZZ
@given(YAMLISH)
def test_yamlish_text(text: str) -> None:
    assert_loads_or_refuses(text.encode("utf-8"))


@pytest.mark.slow  # hundreds of generated examples
@FUZZ
@given(mutated_workflow())
def test_mutated_workflow_loads(raw: bytes) -> None:
    assert_loads_or_refuses(raw)


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "sources.yaml").write_text("sources: {}\n")
    (root / "workflows").mkdir()
    (root / "deployments").mkdir()
    return root


def assert_project_never_raises(root: Path, rel: str, raw: bytes) -> None:
    (root / rel).write_bytes(raw)
    project = finishes(lambda: load_project(root))
    for d in project.diagnostics:
        assert d.file == rel and d.line >= 1 and d.column >= 1 and d.code and d.message
    if project.diagnostics:
        assert rel in project.broken_files
    for fmt in FORMATS:  # every reporter copes with whatever the loader said
        render(project.diagnostics, fmt, io.StringIO())


@pytest.mark.slow  # hundreds of generated examples
@FUZZ
@given(mutated_workflow())
def test_load_project_never_raises_on_mutated_workflows(fuzz_project: Path, raw: bytes) -> None:
    assert_project_never_raises(fuzz_project, "workflows/x.yaml", raw)


@pytest.mark.slow  # hundreds of generated examples
@FUZZ
@given(YAMLISH)
def test_load_project_never_raises_on_yamlish_deployments(fuzz_project: Path, text: str) -> None:
    (fuzz_project / "workflows" / "x.yaml").unlink(missing_ok=True)
    assert_project_never_raises(fuzz_project, "deployments/d.yaml", ("name: d\n" + text).encode())
    (fuzz_project / "deployments" / "d.yaml").unlink()


def test_the_seed_workflow_is_valid(fuzz_project: Path) -> None:
    (fuzz_project / "workflows" / "x.yaml").write_text(VALID_WORKFLOW)
    project = load_project(fuzz_project)
    assert project.diagnostics == [] and "fuzz" in project.workflows
