"""Python sources: functions decorated with `wfops.node` in a module of the project.

    from pydantic import BaseModel
    import wfops

    class In(BaseModel): path: str
    class Out(BaseModel): text: str

    @wfops.node
    def read_notes(payload: In) -> Out: ...

    @wfops.node(outcomes=["ok", "empty"])
    async def extract(payload: Out) -> wfops.Result[Report]: ...
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import inspect
import json
import re
import sys
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from wfops.daemon import DaemonPool
from wfops.errors import CapabilityError, WfopsError
from wfops.jsonvalues import plain_size_bound
from wfops.model.rules import duration_seconds
from wfops.records import init
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext, ok_result
from wfops.sources.contract import ContractError, model_output, split_undeclared
from wfops.sources.modules import (  # re-exported: python sources are loaded through here
    ImportTimedOut,
    ModuleOutsideProject,
    forget_project_modules,
    import_project_module,
    in_project_dir,
    module_file,
    prints_to_stderr,
)
from wfops.sources.steplogs import capturing, installed

T = TypeVar("T")
# Outcomes are `on:` keys, and a subworkflow's outcomes are `end:` values: the same alphabet.
_OUTCOME = re.compile(r"[A-Za-z0-9_-]+")

#: Where sync nodes run: reused daemon threads, at most this many serving at once (a
#: `foreach` with `concurrency` above it queues its sync calls; async nodes are unbounded).
SYNC_WORKERS = 64
SYNC_NODES = DaemonPool(SYNC_WORKERS, "wfops-node")

#: The source whose `calls_held` the current task runs inside (a fan-out's item tasks are
#: started within it and inherit it): its calls find their guards already up, held until
#: every item's call has ended, and skip setting them up.
_HELD: contextvars.ContextVar[PythonSource | None] = contextvars.ContextVar("wfops_calls_held", default=None)


@dataclass(frozen=True)
class Result(Generic[T]):
    """What a node returns to end in an outcome other than `ok` (or with no output), or to
    return `extra` data beside its output: stored in the step's trace entry, never in state."""

    outcome: str = "ok"
    output: T | None = None
    extra: dict[str, Any] | None = None


@dataclass(frozen=True)
class NodeSpec:
    name: str
    outcomes: tuple[str, ...]
    input_model: type[BaseModel]
    output_model: type[BaseModel] | None
    description: str
    is_async: bool
    context_param: str | None  # name of the optional StepContext parameter
    defaults: Mapping[str, Any] = field(default_factory=dict)  # `retry`/`timeout` a step gets unless it gives its own
    cache: bool | float | None = None  # the step cache default: True, a ttl in seconds, or None
    declared: Mapping[str, Any] | None = None  # the output model's keys as its JSON names them
    one_dump: bool = False  # `dumps_once(output_model)`: a plain python dump of its instances is their output
    # The input model validates as pydantic's own `model_validate` does (no override of its
    # own): its validator is called directly, without that method's wrapper.
    plain_validate: bool = False
    ok_declared: bool = False  # `ok` is one of its outcomes (a node returning its model bare ends in it)


class NodeDefinitionError(WfopsError):
    pass


class NodeExit(CapabilityError):
    """A node raised `SystemExit` or `KeyboardInterrupt`: a failed step, named after it."""

    def __init__(self, exc: BaseException) -> None:
        kind = type(exc).__name__
        if isinstance(exc, SystemExit):
            message = f"the capability called sys.exit({exc.code!r}); return or raise instead"
        else:
            message = f"the capability raised {kind}; return or raise an ordinary exception instead"
        super().__init__(message)
        self.error_type = kind


def node(fn: Callable[..., Any] | None = None, *, outcomes: list[str] | tuple[str, ...] = ("ok",),
         name: str | None = None, retry: Mapping[str, Any] | None = None, timeout: float | None = None,
         cache: bool | float | str | None = None) -> Any:
    """Mark a function as a capability. Input and output models come from its annotations.
    `retry` (the keys of a step's `retry:`) and `timeout` (seconds per attempt) are what a step
    calling it gets unless it gives its own; they are part of its contract in wfops.lock.
    `cache`: the step cache default of its steps (True, or a ttl such as `"1h"` or seconds)."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        # Kept as given: `outcomes="ok"` must be reported, not read as the outcomes `o` and `k`.
        func.__wfops_node__ = {"outcomes": outcomes, "name": name or func.__name__,  # type: ignore[attr-defined]
                               "retry": retry, "timeout": timeout}
        if cache is not None:
            func.__wfops_node__["cache"] = cache  # type: ignore[attr-defined]
        return func

    return mark(fn) if fn is not None else mark


def _spec_of(func: Callable[..., Any]) -> NodeSpec:
    marker = func.__wfops_node__  # type: ignore[attr-defined]
    where = f"{func.__module__}.{func.__qualname__}"
    try:
        hints = typing.get_type_hints(func)
    except Exception as exc:
        raise NodeDefinitionError(f"{where}: cannot read its type annotations ({exc})") from None
    params = [p for p in inspect.signature(func).parameters.values() if p.name not in ("context", "ctx")]
    if len(params) != 1:
        raise NodeDefinitionError(f"{where}: a node takes exactly one payload parameter (a pydantic model)")
    input_model = hints.get(params[0].name)
    if not (isinstance(input_model, type) and issubclass(input_model, BaseModel)):
        raise NodeDefinitionError(f"{where}: annotate the payload parameter with a pydantic model")
    returned = hints.get("return")
    if typing.get_origin(returned) is Result:
        (returned,) = typing.get_args(returned) or (None,)
    elif returned is Result:
        returned = None
    if returned is type(None):
        returned = None
    if returned is not None and not (isinstance(returned, type) and issubclass(returned, BaseModel)):
        raise NodeDefinitionError(f"{where}: annotate the return with a pydantic model or wfops.Result[Model]")
    outcomes = marker["outcomes"]
    if not isinstance(outcomes, list | tuple) or not outcomes \
            or not all(isinstance(o, str) and _OUTCOME.fullmatch(o) for o in outcomes) \
            or len(set(outcomes)) != len(outcomes):
        raise NodeDefinitionError(f"{where}: `outcomes` must be a non-empty list of distinct names "
                                  f"(letters, digits, `_`, `-`); got {outcomes!r}",
                                  hint='declare them as a list: `@wfops.node(outcomes=["ok", "empty"])`')
    name = marker["name"]
    if not isinstance(name, str) or not re.fullmatch(r"\S+", name):
        raise NodeDefinitionError(f"{where}: `name` must be a non-empty string without spaces; got {name!r}")
    signature = inspect.signature(func)
    cache = marker.get("cache")
    if cache is not None and not isinstance(cache, bool):
        try:
            cache = duration_seconds(cache)
        except ValueError as exc:
            raise NodeDefinitionError(f"{where}: `cache` must be True, False or a ttl; {exc}",
                                      hint='e.g. `@wfops.node(cache="1h")`') from None
    return NodeSpec(
        name=name, outcomes=tuple(outcomes), input_model=input_model, output_model=returned,
        description=inspect.cleandoc(func.__doc__ or ""),
        is_async=inspect.iscoroutinefunction(func),
        context_param=next((p for p in ("context", "ctx") if p in signature.parameters), None),
        defaults=_defaults(where, marker.get("retry"), marker.get("timeout")),
        cache=cache,
        declared=_aliases(returned) if returned is not None else None,
        one_dump=returned is not None and dumps_once(returned),
        ok_declared="ok" in outcomes,
        plain_validate=getattr(input_model.model_validate, "__func__", None) is BaseModel.model_validate.__func__,  # type: ignore[attr-defined]
    )


def _defaults(where: str, retry: Any, timeout: Any) -> dict[str, Any]:
    """A node's `retry`/`timeout` defaults, checked as a step's own would be, as JSON."""
    found: dict[str, Any] = {}
    if retry is not None:
        # deferred: the workflow model (pydantic) is off a recorded run's path, paid for by a retry default only
        from wfops.model.workflow import Retry

        try:
            found["retry"] = Retry.model_validate(retry).model_dump(mode="json", exclude_none=True)
        except ValidationError as exc:
            raise NodeDefinitionError(f"{where}: `retry` {_brief(exc).replace('input', 'retry', 1)}",
                                      hint="give the keys of a step's `retry:`, e.g. "
                                           '`retry={"attempts": 3, "backoff": 1, "on": ["Timeout"]}`') from None
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < float("inf"):
            raise NodeDefinitionError(f"{where}: `timeout` must be a positive number of seconds; got {timeout!r}")
        found["timeout"] = timeout
    return found


class NodeContext(StepContext):
    """What a python node's `context` parameter receives: the step's context, plus the
    project root (absolute), the documented place for a node's own files."""

    __slots__ = ("project_root",)

    project_root: Path | None

    def __init__(self, run_id: str, workflow: str, deployment: str | None, step: str, attempt: int,
                 idempotency_key: str, extra: Mapping[str, Any] | None = None,
                 project_root: Path | None = None) -> None:
        super().__init__(run_id, workflow, deployment, step, attempt, idempotency_key, extra)
        init(self, "project_root", project_root)


_CONTEXT_FIELDS = StepContext._fields


class PythonSource:
    """A module of `@wfops.node` functions. Sync functions run in a worker thread."""

    def __init__(self, source_id: str, module: Any, root: Path | None = None) -> None:
        """`root`: the project root, the working directory of its nodes and their
        `context.project_root` (None: left as it is)."""
        self.id = source_id
        self.root = root
        self.kind: SourceKind = "python"
        self.module = module
        self._nodes: dict[str, tuple[NodeSpec, Callable[..., Any]]] = {}
        for value in vars(module).values():
            if callable(value) and hasattr(value, "__wfops_node__"):
                spec = _spec_of(value)
                self._nodes[spec.name] = (spec, value)
        self._refs = {name: f"{source_id}.{name}" for name in self._nodes}  # what its messages name
        code = code_hash(module, root)
        self._caps = {name: _capability(source_id, spec, f"{func.__module__}.{func.__qualname__}", code)
                      for name, (spec, func) in sorted(self._nodes.items())}

    async def open(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Capability]:
        return self._caps

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        return (await self.call_sized(name, payload, context))[0]

    async def call_sized(self, name: str, payload: dict[str, Any], context: StepContext
                         ) -> tuple[CallResult, int | None]:
        """`call`, and `plain_size_bound` of its output when finding the output took that walk
        (None: not known), so that the contract's check (`call_checked`) does not walk it again."""
        spec, func, model, kwargs = self._prepare(name, payload, context)
        try:
            if _HELD.get() is self:
                # Inside this source's `calls_held`, which outlasts the call: only its own log.
                with capturing(context, installed=True):
                    returned = await func(model, **kwargs) if spec.is_async \
                        else await SYNC_NODES.run(lambda: func(model, **kwargs))
            else:
                with capturing(context), prints_to_stderr(), in_project_dir(self.root):
                    returned = await func(model, **kwargs) if spec.is_async \
                        else await SYNC_NODES.run(lambda: func(model, **kwargs))
        except (KeyboardInterrupt, SystemExit) as exc:
            # Raised by the node's own code (a real Ctrl-C reaches wfops as a cancellation,
            # never through a node): it fails the step, never the process or the MCP server.
            raise NodeExit(exc) from None
        return _to_result(self._refs[name], spec, returned)

    @contextlib.contextmanager
    def calls_held(self) -> Iterator[None]:
        """What every call sets up around the node (the log capture's wrappers, stdout sent to
        stderr, the project root as working directory), set up once for many calls: a
        fan-out's items, which would otherwise each set it up and take it down again, since
        a node that never waits finishes before the next starts. The calls of tasks started
        inside (which inherit `_HELD`) then set up only their own log; wfops's own work
        between the calls (committing items) runs inside too, as it does between
        overlapping calls. The holder must not leave before those calls have ended (a
        foreach awaits, or cancels and awaits, its items' tasks)."""
        with installed(), prints_to_stderr(), in_project_dir(self.root):
            token = _HELD.set(self)
            try:
                yield
            finally:
                _HELD.reset(token)

    def call_here(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        """The same call, in the calling thread (a Dask worker's task thread, which has no
        event loop): a sync node is called directly, an async one on a loop of its own."""
        import asyncio  # deferred: asyncio (~33 ms), only async nodes on a worker need it

        spec, func, model, kwargs = self._prepare(name, payload, context)
        try:
            with prints_to_stderr(), in_project_dir(self.root):
                returned = asyncio.run(func(model, **kwargs)) if spec.is_async else func(model, **kwargs)
        except (KeyboardInterrupt, SystemExit) as exc:  # as in `call`: the node's own, never the worker's end
            raise NodeExit(exc) from None
        return _to_result(self._refs[name], spec, returned)[0]

    def _prepare(self, name: str, payload: dict[str, Any], context: StepContext
                 ) -> tuple[NodeSpec, Callable[..., Any], BaseModel, dict[str, Any]]:
        spec, func = self._nodes[name]
        try:
            model = spec.input_model.__pydantic_validator__.validate_python(payload) if spec.plain_validate \
                else spec.input_model.model_validate(payload)
        except ValidationError as exc:
            # Another attempt would get the same input: a failure retries never mend.
            raise ContractError("InvalidInput", f"input does not match {spec.input_model.__name__}: "
                                f"{_brief(exc)}") from None
        return spec, func, model, ({spec.context_param: self._node_context(context)} if spec.context_param else {})

    def _node_context(self, context: StepContext) -> NodeContext:
        known = {name: getattr(context, name) for name in _CONTEXT_FIELDS}
        return NodeContext(**known, project_root=self.root)

    async def close(self) -> None:
        return None


def _capability(source_id: str, spec: NodeSpec, where: str, code: str | None = None) -> Capability:
    input_schema = _json_schema(spec.input_model, "input", where)
    output_schema = _json_schema(spec.output_model, "output", where) if spec.output_model else {"type": "object"}
    return Capability(source_id, spec.name, input_schema, output_schema, spec.outcomes, spec.description,
                      defaults=spec.defaults, code=code, cache=spec.cache)


_LIBRARY = re.compile(r"[/\\](site|dist)-packages[/\\]")
_WFOPS = Path(__file__).resolve().parent.parent


def code_hash(module: Any, root: Path | None) -> str | None:
    """The hash of a node module's code and of every project module it uses, directly or
    through another (its imports of modules, and of names defined in them): a step cache key
    part, so an edited body, or an edited helper the body calls, is a miss. None when the
    module has no file (nothing to hash)."""
    if getattr(module, "__file__", None) is None:
        return None
    base = root.resolve() if root is not None else Path(module.__file__).resolve().parent
    seen: dict[str, bytes] = {}
    todo = [module]
    while todo:
        current = todo.pop()
        origin = getattr(current, "__file__", None)
        if not origin:
            continue
        path = Path(origin).resolve()
        key = str(path)
        # Libraries are not the project's code, even in a virtualenv inside it, nor is wfops.
        if key in seen or not path.is_relative_to(base) or _LIBRARY.search(key) or path.is_relative_to(_WFOPS):
            continue
        try:
            seen[key] = path.read_bytes()
        except OSError:
            seen[key] = b""
        for value in list(vars(current).values()):
            used = value if inspect.ismodule(value) else sys.modules.get(getattr(value, "__module__", None) or "")
            if used is not None and used is not current:
                todo.append(used)
    digest = hashlib.sha256()
    for key in sorted(seen):
        digest.update(Path(key).relative_to(base).as_posix().encode() + b"\0" + hashlib.sha256(seen[key]).digest())
    return digest.hexdigest()


def _json_schema(model: type[BaseModel], role: str, where: str) -> dict[str, Any]:
    """The model's JSON Schema, which the lock stores as JSON: it must exist and be plain JSON."""
    try:
        schema = model.model_json_schema()
    except Exception as exc:  # pydantic cannot describe some field types (callables, arbitrary classes)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NodeDefinitionError(f"{where}: its {role} model {model.__name__} has no JSON Schema ({first})",
                                  hint="use JSON-compatible field types (str, int, float, bool, lists, "
                                  "dicts, nested models)") from None
    try:
        json.dumps(schema, allow_nan=False)
    except ValueError:
        raise NodeDefinitionError(f"{where}: its {role} model {model.__name__} has a default or constraint "
                                  "that is not JSON (NaN or infinity)",
                                  hint="use a finite number or None as the default") from None
    return schema


def _to_result(ref: str, spec: NodeSpec, returned: Any) -> tuple[CallResult, int | None]:
    """The call's result, and `plain_size_bound` of its output where `_dumped` found it (else None)."""
    if spec.one_dump and type(returned) is spec.output_model and spec.ok_declared:
        # The common case, in a line: what the general path below concludes for an instance of
        # the output model whose one dump is plain JSON of declared keys only.
        python = returned.__pydantic_serializer__.to_python(returned)
        bound = plain_size_bound(python)
        declared = spec.declared
        if bound is not None and (not isinstance(declared, dict) or python.keys() <= declared.keys()):
            return ok_result(python), bound
    outcome, output, extra = ("ok", returned, None)
    if isinstance(returned, Result):
        outcome, output, extra = returned.outcome, returned.output, returned.extra
    if extra is not None and not isinstance(extra, dict):
        raise CapabilityError(f"returned `extra` of type {type(extra).__name__}; give a mapping")
    if outcome not in spec.outcomes:
        raise CapabilityError(f"returned undeclared outcome {outcome!r}; declared: {', '.join(spec.outcomes)}")
    if output is None:
        if outcome == "ok" and spec.output_model is not None:
            raise CapabilityError("returned no output for outcome `ok`")
        return CallResult(outcome, None, extra), None
    declared = spec.declared
    # The exact output model first: `isinstance` against a pydantic model class is the ABC's check, in Python.
    if type(output) is spec.output_model or isinstance(output, BaseModel):
        dumped, bound = _dumped(ref, spec, output)
        # Keys moved to the extras leave a part of the output: a bound of the whole still holds.
        return CallResult(outcome, *split_undeclared(dumped, declared, extra)), bound
    if isinstance(output, dict):
        return CallResult(outcome, *split_undeclared(output, declared, extra)), None
    raise CapabilityError(f"returned {type(output).__name__}; return a pydantic model or wfops.Result")


def _dumped(ref: str, spec: NodeSpec, output: BaseModel) -> tuple[Any, int | None]:
    """`model_output(ref, output)`, dumped once where it can be: for an instance of an output
    model `dumps_once` said yes to, a python dump that is plain JSON (`plain_size_bound` is
    not None: no NaN, no tuples, dates or other objects) is what its JSON dump would be, so
    it is the output; with that bound (None when it took the two dumps)."""
    python = None
    if spec.one_dump and type(output) is spec.output_model:
        python = output.__pydantic_serializer__.to_python(output)  # `model_dump()`, without its wrapper
        bound = plain_size_bound(python)
        if bound is not None:
            return python, bound
    return model_output(ref, output, python), None


#: Parts of a core schema that hold values or functions, not serializers.
_NOT_SCHEMA = frozenset({"cls", "metadata", "config", "members", "expected", "function", "default", "ref"})


def dumps_once(model: type[BaseModel]) -> bool:
    """Whether an instance of `model` whose python dump is plain JSON (`plain_json`) dumps
    to the same in JSON mode, so that `_dumped` may take one dump, not `model_output`'s two.
    pydantic's own serializers differ between the modes only for values JSON has no type
    for (dates, bytes, tuples, enum members, NaN: none plain), so that holds unless a
    serializer of the model's own may look at the mode: a `serialization` anywhere in its
    core schema (`field_serializer`, `model_serializer`, `PlainSerializer`, a type's own
    schema), a `model_dump` of its own, or polymorphic serialization. Decided once per model."""
    schema = getattr(model, "__pydantic_core_schema__", None)
    if not isinstance(schema, dict) or model.model_dump is not BaseModel.model_dump:
        return False
    todo: list[Any] = [schema]
    for _ in range(_MOST_NODES):
        if not todo:
            return True
        node = todo.pop()
        if isinstance(node, dict):
            config = node.get("config")
            if "serialization" in node or isinstance(config, dict) and config.get("polymorphic_serialization"):
                return False  # (a subclass instance's own serializer would decide)
            todo.extend(value for key, value in node.items() if key not in _NOT_SCHEMA)
        elif isinstance(node, list | tuple):
            todo.extend(node)
    return False  # a schema this large is not worth reading for it


_MOST_NODES = 100_000


def _aliases(model: type[BaseModel]) -> dict[str, Any]:
    """The output keys a model declares: its fields by the name the JSON output uses."""
    return {(getattr(info, "serialization_alias", None) or getattr(info, "alias", None) or name): info
            for name, info in model.model_fields.items()}


def _brief(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "input"
    # Say so when the value was null: a workflow path that found nothing (a mistyped `$input.x`)
    # gives null, and "should be a valid string" alone does not point there. Only null is named:
    # other values may be secrets.
    got = ", got null" if first["input"] is None and first["type"] != "missing" else ""
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{got}{more}"


__all__ = ["ImportTimedOut", "ModuleOutsideProject", "NodeDefinitionError", "PythonSource", "Result",
           "forget_project_modules", "import_project_module", "in_project_dir", "module_file", "node",
           "prints_to_stderr"]
