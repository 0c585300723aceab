"""The lock as a typed object: parsed and shape-checked once, lookups instead of `.get` chains,
and the very bytes `wfops compile` wrote when it is dumped again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from wfops.errors import WfopsError
from wfops.lock.summary import lock_changes
from wfops.lockfile import (
    Lock,
    LockedContract,
    LockedDeployment,
    LockedWorkflow,
    dump_lock,
    read_lock,
    write_lock,
)


def compiled_lock(root: Path) -> dict:
    from wfops.compiler.validate import validate_project
    from wfops.lock.build import compile_project
    from wfops.sources.python import forget_project_modules

    try:
        return compile_project(validate_project(root)).to_lock()
    finally:
        forget_project_modules(root)


def test_the_repository_lock_reads_typed_and_dumps_byte_identical() -> None:
    lock = read_lock(REPO)
    assert isinstance(lock, Lock) and lock.version == 1
    assert lock.to_json() == (REPO / "wfops.lock").read_text(encoding="utf-8")
    assert dump_lock(lock) == lock.to_json()
    clock = lock.source_capabilities("clock")
    assert clock is not None and set(clock) == {"convert_time", "get_current_time"}
    assert lock.source("clock") is not None and lock.source("clock").kind == "mcp"  # type: ignore[union-attr]
    fmt = lock.contract("std", "format")
    assert isinstance(fmt, LockedContract) and fmt.hash and len(fmt.hash) == 64
    assert lock.contract("std", "no-such") is None and lock.contract("nowhere", "x") is None
    assert lock.source_capabilities("nowhere") is None
    deployment = lock.deployment("world-clock.local")
    assert isinstance(deployment, LockedDeployment)
    assert deployment.workflow == "world-clock" and deployment.bindings["time"] == "clock"
    assert deployment.secrets == () and deployment.pin is None
    assert deployment.requires["clock.convert_time"] == lock.contract("clock", "convert_time").hash  # type: ignore[union-attr]
    workflow = lock.workflow("world-clock")
    assert isinstance(workflow, LockedWorkflow) and workflow.hash == deployment.artifact
    assert lock.drift_policy("world-clock.local") == "fail"
    assert lock.drift_policy("nope") == "fail" and lock.drift_policy(None) == "fail"


def test_compile_output_round_trips_through_the_typed_lock(project: Path) -> None:
    fresh = compiled_lock(project)
    lock = Lock.from_dict(fresh)
    assert lock.to_json() == dump_lock(fresh)
    assert lock.to_dict() == fresh and lock.to_dict() is not lock.document
    write_lock(project, lock)
    assert (project / "wfops.lock").read_text(encoding="utf-8") == dump_lock(fresh)
    again = read_lock(project)
    assert again == lock  # typed fields compare equal
    assert lock.workflow("hello").subworkflows == {"loud": lock.workflow("loud").hash}  # type: ignore[union-attr]
    assert lock.contract("ops", "shout").as_capability("ops", "shout").outcomes == ("ok", "empty")  # type: ignore[union-attr]


def test_drift_policy_reads_the_recorded_policy(project: Path) -> None:
    fresh = compiled_lock(project)
    fresh["deployments"]["hello.local"]["drift"] = "warn"
    assert Lock.from_dict(fresh).drift_policy("hello.local") == "warn"
    del fresh["deployments"]["hello.local"]["drift"]
    lock = Lock.from_dict(fresh)
    assert lock.deployment("hello.local").drift is None  # type: ignore[union-attr]
    assert lock.drift_policy("hello.local") == "fail"


def test_absent_fields_read_as_defaults_and_unknown_keys_survive() -> None:
    data = {"version": 1, "sources": {"s": {"capabilities": {"c": {}}, "future": [1]}}}
    lock = Lock.from_dict(data)
    assert lock.workflows == {} and lock.deployments == {}
    contract = lock.contract("s", "c")
    assert contract == LockedContract() and contract.as_capability("s", "c").outcomes == ("ok",)  # type: ignore[union-attr]
    assert json.loads(lock.to_json()) == data


@pytest.mark.parametrize(("document", "problem"), [
    ("[1, 2]", "the top level is not a JSON object"),
    ('{"version": 99}', "unsupported lock version 99 (this wfops reads version 1)"),
    ('{"version": 1, "workflows": []}', "`workflows` is not an object of objects"),
    ('{"version": 1, "sources": {"s": {"capabilities": {"c": 1}}}}', "sources.s.capabilities is not an object of objects"),
    ('{"version": 1, "workflows": {"w": {"hash": 5}}}', "workflows.w.hash is not a string"),
    ('{"version": 1, "deployments": {"d": {"secrets": "TOKEN"}}}', "deployments.d.secrets is not a list of strings"),
    ('{"version": 1, "deployments": {"d": {"requires": {"a.b": 1}}}}',
     "deployments.d.requires is not an object of strings or nulls"),
    ('{"version": 1, "sources": {"s": {"capabilities": {"c": {"input_schema": []}}}}}',
     "sources.s.capabilities.c.input_schema is not an object"),
    ('{"version": 1, "sources": {"s": {"capabilities": {"c": {"outcomes": [1]}}}}}',
     "sources.s.capabilities.c.outcomes is not a list of strings"),
])
def test_corrupt_locks_say_what_is_wrong(tmp_path: Path, document: str, problem: str) -> None:
    (tmp_path / "wfops.lock").write_text(document)
    with pytest.raises(WfopsError) as info:
        read_lock(tmp_path)
    assert info.value.message == f"wfops.lock is corrupt: {problem}"
    assert info.value.hint == "restore it from git, or run `wfops compile` to write it again"


def test_not_json_is_corrupt_and_no_file_is_none(tmp_path: Path) -> None:
    assert read_lock(tmp_path) is None
    (tmp_path / "wfops.lock").write_text("{not json")
    with pytest.raises(WfopsError, match=r"^wfops.lock is corrupt: Expecting property name"):
        read_lock(tmp_path)


def test_lock_changes_takes_the_typed_lock_and_compile_output(project: Path) -> None:
    fresh = compiled_lock(project)
    old = Lock.from_dict(fresh)
    assert lock_changes(old, fresh) == []
    assert lock_changes(None, fresh) == ["new lock"]
    changed = json.loads(json.dumps(fresh))
    changed["workflows"]["loud"]["hash"] = "f" * 64
    changed["sources"]["ops"]["capabilities"]["greet"]["description"] = "Say hi."
    del changed["deployments"]["hello.local"]
    assert lock_changes(old, changed) == [f"~ workflow loud {old.workflow('loud').hash[:12]} -> ffffffffffff",  # type: ignore[index,union-attr]
                                          "- deployment hello.local", "~ capability ops.greet"]
