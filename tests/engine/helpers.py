"""Test seams for the engine: a real in-test source, a recording sink that can 'crash'."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Mapping
from typing import Any

from wfops.engine.engine import Engine
from wfops.engine.types import RunSnapshot, TraceEntry
from wfops.model.objects import Workflow
from wfops.model.plain import validated
from wfops.sources.base import CallResult, Capability, StepContext
from wfops.sources.registry import BoundResolver
from wfops.sources.std import StdSource

ANY_OBJECT = {"type": "object"}


class Crash(BaseException):
    """Stands for the process dying: the commit it interrupts never happened."""


class MemorySink:
    def __init__(self, crash_at: int | None = None) -> None:
        self.commits: list[tuple[RunSnapshot, list[TraceEntry]]] = []
        self.crash_at = crash_at

    def commit(self, run: RunSnapshot, entries: list[TraceEntry]) -> None:
        if self.crash_at is not None and len(self.commits) + 1 == self.crash_at:
            raise Crash
        self.commits.append((copy.deepcopy(run), copy.deepcopy(entries)))

    @property
    def trace(self) -> list[TraceEntry]:
        return [e for _, entries in self.commits for e in entries]

    @property
    def last(self) -> RunSnapshot:
        return self.commits[-1][0]


Handler = Callable[[dict[str, Any], StepContext], Any]


class TestSource:
    """A real `Source`: capabilities are plain functions; sync ones run in a worker thread."""

    __test__ = False

    def __init__(self, id: str = "t") -> None:
        self.id = id
        self.caps: dict[str, Capability] = {}
        self.handlers: dict[str, Handler] = {}
        self.calls: list[tuple[str, dict[str, Any], StepContext]] = []

    def add(self, name: str, handler: Handler, *, outcomes: tuple[str, ...] = ("ok",),
            output_schema: dict[str, Any] | None = None) -> None:
        self.caps[name] = Capability(self.id, name, ANY_OBJECT, output_schema or ANY_OBJECT, outcomes)
        self.handlers[name] = handler

    async def open(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Capability]:
        return self.caps

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        self.calls.append((name, payload, context))
        handler = self.handlers[name]
        if asyncio.iscoroutinefunction(handler):
            result = await handler(payload, context)
        else:
            result = await asyncio.to_thread(handler, payload, context)
        return result if isinstance(result, CallResult) else CallResult("ok", result)

    async def close(self) -> None:
        return None

    def called(self, name: str) -> list[tuple[dict[str, Any], StepContext]]:
        return [(p, c) for n, p, c in self.calls if n == name]


def workflow(data: dict[str, Any]) -> Workflow:
    return validated("workflow", data)


def make_engine(workflows: list[dict[str, Any]], source: TestSource | None = None,
                sink: MemorySink | None = None, **kwargs: Any) -> tuple[Engine, TestSource, MemorySink]:
    source = source or TestSource()
    sink = sink or MemorySink()
    models = {w["name"]: workflow(w) for w in workflows}
    resolver = BoundResolver({"std": StdSource(), source.id: source})
    return Engine(models, resolver, sink, **kwargs), source, sink


def run(coro: Any) -> Any:
    return asyncio.run(coro)
