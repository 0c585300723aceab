"""The step cache, as the engine sees it: which call steps are served from it, their keys, and
the entry of a hit. Where the results live is the driver's `cache` (`StepCache`, the run store).

A key is the capability (its concrete ref), its contract hash, the hash of the code behind it
(where its source gives one), the step's resolved input with secret values masked, the names
of the secrets the step reads, and the step's own `cache.key`. Anything else the step
declares (its routes, its `save`) is applied afresh to a hit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wfops.canonical import sha256_of
from wfops.engine.types import CachedResult, CacheNote
from wfops.engine.values import compile_value
from wfops.model.paths import is_path, parse_path
from wfops.model.rules import duration_seconds

if TYPE_CHECKING:
    from wfops.engine.frame import Frame
    from wfops.engine.plan import StepPlan
    from wfops.engine.run import RunContext
    from wfops.sources.base import StepContext

#: What `RunContext.cache_policies` gives for a ref not asked about yet.
UNASKED: Any = object()
_DESTRUCTIVE: Any = object()

#: Changes when what goes into a key does: every entry of an older form is then a miss.
KEY_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Lookup:
    """A cached step's key and what the cache held for it (None: a miss)."""

    key: str
    capability: str
    contract: str
    ttl: float | None
    hit: CachedResult | None

    def note(self, seconds: float) -> CacheNote:
        return CacheNote(self.key, self.capability, self.contract, round(seconds, 6), self.ttl)


def policy(run: RunContext, sp: StepPlan) -> tuple[float | None, Any] | None:
    """(ttl in seconds or None, the declared `cache.key`) of a call step that is cached; None
    for one that is not (no `cache:` and no capability default, `cache: false`, or no cache)."""
    if run.engine.cache is None:
        return None
    declared = sp.cache
    if declared is False:
        return None
    default = _default_of(run, sp.uses or "")
    if default is _DESTRUCTIVE:  # validate reports `cache:` on it; a hit must never skip a side effect
        return None
    default_ttl = None if default is None or isinstance(default, bool) else float(default)
    if declared is None:
        return None if default is None or default is False else (default_ttl, None)
    if declared is True:
        return None, None
    ttl = duration_seconds(declared.ttl) if declared.ttl is not None else default_ttl
    return ttl, declared.key


def _default_of(run: RunContext, ref: str) -> Any:
    """The capability's own cache default (`Capability.cache`), or `_DESTRUCTIVE`; asked of
    the capability once per run and ref, not on every step that calls it."""
    found = run.cache_policies.get(ref, UNASKED)
    if found is UNASKED:
        cap = run.capability(ref)
        found = run.cache_policies[ref] = _DESTRUCTIVE if cap.destructive else cap.cache
    return found


def look_up(run: RunContext, frame: Frame, sp: StepPlan, ctx: StepContext, payload: Any) -> Lookup | None:
    """The step's cache lookup; None when the step is not cached (or its input has no key)."""
    chosen = policy(run, sp)
    cache = run.engine.cache
    if chosen is None or cache is None:
        return None
    ttl, declared_key = chosen
    cap = run.capability(sp.uses or "")
    extra = compile_value(declared_key)(run.scope(frame, ctx)) if declared_key is not None else None
    red = run.redactor.redact if run.redactor.active else _same
    contract = cap.contract_hash
    try:
        key = sha256_of({"format": KEY_FORMAT, "capability": cap.ref, "contract": contract, "code": cap.code,
                         "input": red(payload), "secrets": secret_names(sp.step.__dict__.get("with_")),
                         "key": red(extra)})
    except (TypeError, ValueError):  # not JSON (NaN, a foreign object): the step runs uncached
        return None
    return Lookup(key, cap.ref, contract, ttl, cache.cache_lookup(key, ttl))


def secret_names(value: Any) -> list[str]:
    """The secrets a step's bindings read (`$secret.NAME`), sorted, each once."""
    found: set[str] = set()
    _secrets_in(value, found)
    return sorted(found)


def _secrets_in(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if value.startswith("$secret.") and is_path(value):
            try:
                found.add(str(parse_path(value).parts[0]))
            except (ValueError, IndexError):  # a malformed path, which the checks report
                found.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            _secrets_in(item, found)
    elif isinstance(value, list):
        for item in value:
            _secrets_in(item, found)


def origin_of(hit: CachedResult) -> dict[str, Any]:
    """What a hit's trace entry says of where its result came from, and the time it saved."""
    return {"run_id": hit.run_id, "step": hit.step, "seq": hit.seq, "saved": hit.seconds}


def _same(value: Any) -> Any:
    return value
