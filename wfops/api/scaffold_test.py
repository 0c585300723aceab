"""A workflow test file to start from (`Project.new_test`): one case for the path where every
call and interrupt answers its first outcome, then one case per other outcome of each step.

Mocks come from the capabilities' contracts (as wfops.lock holds them for MCP sources): each
output a value that fits the output schema, each interrupt answer a payload that fits the
resume schema. `expect` says only `status: completed`; `run_tests` shows what each case does,
so the author writes down what it must do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wfops.compiler.checks.wftests import workflow_tree
from wfops.model.kinds import walk_steps

if TYPE_CHECKING:
    from wfops.api.authoring import WriteReport
    from wfops.diagnostics import Diagnostic

Contract = Callable[[str], Any]  # concrete ref -> its CapabilityInfo


@dataclass
class TestSkeleton:
    """What `Project.new_test` made: the text, where it goes, its findings, the write if asked."""

    __test__ = False  # not a pytest class

    workflow: str
    path: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    written: WriteReport | None = None


def fitting(schema: Any, name: str = "value") -> Any:
    """A value that fits `schema` as far as its required keys go (strings are `<name>`)."""
    if not isinstance(schema, dict):
        return f"<{name}>"
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {key: fitting(props.get(key), key) for key in schema.get("required") or []}
    zeros: dict[str, Any] = {"integer": 0, "number": 0, "boolean": False, "array": [], "null": None}
    return zeros.get(str(kind), f"<{name}>") if kind != "string" else f"<{name}>"


def test_text(workflows: dict[str, Any], workflow: str, bindings: dict[str, str], contract: Contract) -> str:
    """The YAML text of a test file for `workflow` (its tree's steps mocked by step id)."""
    calls: dict[str, tuple[list[str], Any]] = {}       # step id -> (outcomes, a fitting output)
    asks: dict[str, tuple[list[str], Any]] = {}        # interrupt step id -> (outcomes, a fitting payload)
    for name in workflow_tree(workflows, workflow).workflows:
        for _at, step in walk_steps(workflows[name].steps):
            uses = getattr(step, "uses", None)
            if step.kind == "interrupt":
                asks[step.id] = (list(step.on or {}) or ["ok"], fitting(step.resume_schema, "answer")
                                 if step.resume_schema else None)
            elif isinstance(uses, str) and step.id not in calls:
                logical, _, cap = uses.partition(".")
                info = contract(f"{bindings.get(logical, logical)}.{cap}")
                calls[step.id] = (list(info.outcomes) or ["ok"], fitting(info.output_schema, "output"))
    first = {"input": fitting(workflows[workflow].input or {}, "input")}
    cases = [_case("every step answers its first outcome", first, calls, asks)]
    for table, kind in ((calls, "call"), (asks, "interrupt")):
        for step_id, (outcomes, _value) in table.items():
            for outcome in outcomes[1:]:
                cases.append(_case(f"{step_id} answers {outcome}", first, calls, asks, (kind, step_id, outcome)))
    lines = ["# yaml-language-server: $schema=../.wfops-schemas/wftest.schema.json",
             "# Scaffolded: replace each `<...>` placeholder, then write down in `expect` what each",
             "# case must end with (run_tests shows what it does now).",
             f"workflow: {workflow}", "cases:"]
    for case in cases:
        lines.append(f"  - name: {json.dumps(case['name'])}")
        for key in ("input", "mocks", "interrupts", "expect"):
            if case.get(key):
                lines.append(f"    {key}:")
                lines += [f"      {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in case[key].items()]
    return "\n".join(lines) + "\n"


def _case(name: str, first: dict[str, Any], calls: dict[str, tuple[list[str], Any]],
          asks: dict[str, tuple[list[str], Any]], change: tuple[str, str, str] | None = None) -> dict[str, Any]:
    def answer(kind: str, step_id: str, outcomes: list[str]) -> str:
        return change[2] if change is not None and change[:2] == (kind, step_id) else outcomes[0]
    mocks = {step_id: {"outcome": answer("call", step_id, outcomes), "output": output}
             for step_id, (outcomes, output) in calls.items()}
    interrupts = {step_id: {"outcome": answer("interrupt", step_id, outcomes),
                            **({"payload": payload} if payload is not None else {})}
                  for step_id, (outcomes, payload) in asks.items()}
    return {"name": name, "input": first["input"] if isinstance(first["input"], dict) else None,
            "mocks": mocks, "interrupts": interrupts, "expect": {"status": "completed"}}
