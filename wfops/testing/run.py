"""Run workflow test cases: load and check the test files, then drive each case through
the engine with a `MockResolver` and a `MemorySink` (docs/testing.md)."""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wfops.compiler.checks.wftests import Tree, check_test_files, workflow_tree
from wfops.compiler.validate import Validation, validate_project
from wfops.engine.engine import Engine
from wfops.engine.frame import new_frame
from wfops.errors import WfopsError
from wfops.loader.project import Loaded
from wfops.loader.wftests import find_test_files, load_test_files
from wfops.lockfile import Lock, read_lock
from wfops.model.wftest import Case, Expect, TestFile
from wfops.report.summary import taken_path
from wfops.runner.sources import opened_sources
from wfops.sources.base import Capability, Source
from wfops.testing.mocks import MemorySink, MockResolver, Successive, answer_for
from wfops.testing.results import CaseResult, TestReport

#: Interrupt answers given to one run at most (a loop that re-asks forever must end).
MAX_RESUMES = 1000


async def run_tests(root: Path, files: list[Path] | None = None, pattern: str | None = None) -> TestReport:
    """Every case of the test `files` (default: those under `tests/`) whose `file::name`
    contains `pattern` (case-insensitive). Invalid files and project errors are returned
    as diagnostics, and then no case runs."""
    started = time.perf_counter()
    if files is None:
        files = find_test_files(root)
    loaded, diagnostics = load_test_files(root, files)
    report = TestReport(files=[f.file for f in loaded])
    validation = validate_project(root)
    diagnostics += check_test_files(validation.project, loaded)
    diagnostics += [d for d in validation.diagnostics if d.is_error]
    report.diagnostics = diagnostics
    if report.invalid:
        report.duration = time.perf_counter() - started
        return report
    try:
        lock = read_lock(validation.project.root)
    except WfopsError:
        lock = None
    workflows = {name: item.model for name, item in validation.project.workflows.items()}
    selected = [(item, i, case) for item in loaded for i, case in enumerate(item.model.cases)
                if _selected(item.file, case.name, pattern)]
    plans: list[tuple[Loaded, int, Case, Tree, dict[str, str]]] = []
    real_ids: set[str] = {"std"}
    for item, i, case in selected:
        model: TestFile = item.model
        bindings = _bindings(validation, model)
        plans.append((item, i, case, workflow_tree(workflows, model.workflow), bindings))
        real_ids.update(bindings.get(ref.partition(".")[0], ref.partition(".")[0]) for ref in case.real)
    async with opened_sources(validation.sources, sorted(i for i in real_ids if i in validation.sources)) as opened:
        contracts: dict[str, dict[str, Capability]] = {}
        for item, i, case, tree, bindings in plans:
            key = json.dumps([tree.root, sorted(bindings.items())])
            if key not in contracts:
                contracts[key] = _contracts(tree, bindings, lock, validation)
            report.cases.append(await run_case(item, i, case, tree, bindings, contracts[key], opened))
    report.duration = time.perf_counter() - started
    return report


def _selected(file: str, name: str, pattern: str | None) -> bool:
    return not pattern or pattern.lower() in f"{file}::{name}".lower()


def _bindings(validation: Validation, model: TestFile) -> dict[str, str]:
    """The test's bindings: its `deployment:`'s, else those of the one deployment that runs
    the workflow, else none (each logical source is the concrete source of the same id)."""
    deployments = validation.project.deployments
    if model.deployment is not None:
        return dict(deployments[model.deployment].model.bindings)
    runs = [d.model for d in deployments.values() if d.model.workflow_name == model.workflow]
    return dict(runs[0].bindings) if len(runs) == 1 else {}


def _contracts(tree: Tree, bindings: Mapping[str, str], lock: Lock | None,
               validation: Validation) -> dict[str, Capability]:
    """Logical ref -> contract: as wfops.lock recorded it, else as the source offers it now
    (std and python sources, read at validation)."""
    found: dict[str, Capability] = {}
    for ref in tree.refs:
        logical, _, name = ref.partition(".")
        concrete = bindings.get(logical, logical)
        locked = lock.contract(concrete, name) if lock is not None else None
        if locked is not None:
            found[ref] = locked.as_capability(concrete, name)
        elif name in validation.catalog.get(concrete, {}):
            found[ref] = validation.catalog[concrete][name]
    return found


async def run_case(item: Loaded, index: int, case: Case, tree: Tree, bindings: Mapping[str, str],
                   contracts: Mapping[str, Capability], sources: Mapping[str, Source]) -> CaseResult:
    line, column = item.doc.at(("cases", index, "name"))
    result = CaseResult(case.name, item.file, line, column, tree.root, "passed")
    started = time.perf_counter()
    resolver = MockResolver(contracts, case.mocks, set(case.real), sources, bindings)
    sink = MemorySink()
    engine = Engine(tree.workflows, resolver, sink, deployment=None)
    answers = Successive(case.interrupts)
    try:
        snapshot = await engine.start(tree.root, case.input, run_id=f"test-{index + 1}")
        resumes = 0
        while snapshot.status == "interrupted" and snapshot.interrupt is not None and resumes < MAX_RESUMES:
            answer, why = answer_for(answers, snapshot.interrupt.step)
            if why is not None:
                resolver.problems.append(f"interrupt {snapshot.interrupt.step}: {why}")
            if answer is None:
                break
            snapshot = await engine.resume(snapshot, sink.entries, outcome=answer.outcome, payload=answer.payload)
            resumes += 1
    except WfopsError as exc:  # input or an interrupt answer refused
        result.status, result.message = "error", exc.message
        result.duration = time.perf_counter() - started
        return result
    if resolver.problems:
        result.status, result.message = "error", "; ".join(resolver.problems)
        result.duration = time.perf_counter() - started
        return result
    entries = sorted(sink.entries, key=lambda e: e.seq)
    state = new_frame(engine.plan(tree.root), snapshot.input, trace=entries).state
    actual_all = {"status": snapshot.status, "outcome": snapshot.outcome, "output": snapshot.output,
                  "path": taken_path([e.to_dict() for e in entries], snapshot.status), "state": state,
                  "error": snapshot.error}
    expected, actual, wrong = compare(case.expect, actual_all)
    result.expected, result.actual = expected, actual
    if wrong:
        result.status = "failed"
        result.message = "unexpected " + ", ".join(wrong)
        if snapshot.error and "error" not in expected:
            result.message += (f" (the run failed at {snapshot.error.get('step')}: "
                               f"{snapshot.error.get('type')}: {snapshot.error.get('message')})")
        result.diff = diff_text(expected, actual)
    result.duration = time.perf_counter() - started
    return result


def compare(expect: Expect, actual: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The expected keys, the actual values of the same keys, and the keys that differ."""
    expected: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    wrong: list[str] = []
    for key in ("status", "outcome", "output", "output_includes", "path", "state", "error"):
        if key not in expect.model_fields_set:
            continue
        want = getattr(expect, key)
        if key == "output_includes":
            got = actual["output"]
            ok = includes(got, want)
        elif key == "state":
            got = {name: actual["state"].get(name) for name in want}
            ok = _same(got, want)
        elif key == "error":
            got = actual["error"]
            ok = includes(got, want)
        else:
            got = actual[key]
            ok = _same(got, want)
        expected[key], shown[key] = want, got
        if not ok:
            wrong.append(key)
    return expected, shown, wrong


def _same(a: Any, b: Any) -> bool:
    """JSON equality (`true` is not `1`)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def includes(actual: Any, subset: Any) -> bool:
    """Mappings: every key of `subset` is in `actual` with an including value; else JSON equality."""
    if isinstance(subset, dict):
        return isinstance(actual, dict) and all(k in actual and includes(actual[k], v) for k, v in subset.items())
    return _same(actual, subset)


def diff_text(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    def lines(value: Mapping[str, Any]) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(difflib.unified_diff(lines(expected), lines(actual), "expected", "actual", lineterm=""))


