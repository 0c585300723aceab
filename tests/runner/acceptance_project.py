"""A project that exercises every step kind, operator, reducer and failure mode through
`wfops run`, built from small python sources and `std` (used by test_acceptance_*.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write
from tests.runner.helpers import wfops

NODES = '''
import asyncio
import json
import os
from typing import Any

from pydantic import BaseModel

import wfops


class NIn(BaseModel):
    n: int


class NOut(BaseModel):
    n: int


@wfops.node
def double(payload: NIn) -> NOut:
    """Double a number; negative numbers fail."""
    if payload.n < 0:
        raise ValueError(f"negative: {payload.n}")
    return NOut(n=payload.n * 2)


class SlowIn(BaseModel):
    seconds: float


@wfops.node
async def slow(payload: SlowIn) -> NOut:
    await asyncio.sleep(payload.seconds)
    return NOut(n=1)


class FlakyIn(BaseModel):
    fail_times: int
    counter: str


@wfops.node
def flaky(payload: FlakyIn, context) -> NOut:
    """Fails `fail_times` times (counted in a file), logging attempt and idempotency key."""
    path = payload.counter
    count = int(open(path).read()) if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(str(count + 1))
    with open(path + ".log", "a") as f:
        f.write(json.dumps({"attempt": context.attempt, "key": context.idempotency_key}) + "\\n")
    if count < payload.fail_times:
        raise RuntimeError(f"flaky failure {count}")
    return NOut(n=count)


class Nothing(BaseModel):
    pass


class CtxOut(BaseModel):
    ctx: dict


@wfops.node
def ctx(payload: Nothing, context) -> CtxOut:
    return CtxOut(ctx=context.as_dict())


class Val(BaseModel):
    value: Any = None


@wfops.node
def block(payload: SlowIn) -> NOut:
    """A sync node that ignores its step's timeout (a thread cannot be cancelled)."""
    import time

    time.sleep(payload.seconds)
    return NOut(n=1)


class Mode(BaseModel):
    how: str


class Odd(BaseException):
    pass


@wfops.node
def quit_sync(payload: Mode) -> NOut:
    """Misbehaving user code: sys.exit() or a BaseException instead of an error."""
    if payload.how == "base":
        raise Odd("odd base exception")
    raise SystemExit(3)


@wfops.node
async def quit_async(payload: Mode) -> NOut:
    raise SystemExit(4)


@wfops.node(outcomes=["ok", "none"])
def maybe(payload: Val) -> wfops.Result[Val]:
    if payload.value is None:
        return wfops.Result(outcome="none")
    return wfops.Result(outcome="ok", output=Val(value=payload.value))
'''

CALLS = """
name: calls
input: {type: object, properties: {n: {type: integer}}}
state:
  n: {type: integer}
  ctx: {type: object}
output: {n: $state.n, ctx: $state.ctx}
steps:
  - {id: d1, uses: py.double, with: {n: $input.n}, save: {n: state.n}, next: m}
  - {id: m, uses: py.maybe, with: {value: $input.v}, on: {ok: c, none: nothing}}
  - {id: c, uses: py.ctx, save: {ctx: state.ctx}, next: end}
  - {id: nothing, end: none}
"""

_OPS = [  # (id, condition, hit label)
    ("eq", "{eq: [$input.a, 1]}", "eq"),
    ("ne", "{ne: [$input.a, $input.b]}", "ne"),
    ("gt", "{gt: [$input.b, $input.a]}", "gt"),
    ("ge", "{ge: [$input.a, 1]}", "ge"),
    ("lt", "{lt: [$input.a, $input.b]}", "lt"),
    ("le", "{le: [$input.b, 2]}", "le"),
    ("in", "{in: [$input.s, $input.list]}", "in"),
    ("ex", "{exists: $input.s}", "exists"),
    ("exm", "{exists: $state.never}", "exists-missing"),
    ("and", "{and: [{eq: [$input.a, 1]}, {eq: [$input.flag, true]}]}", "and"),
    ("or", "{or: [{eq: [$input.a, 5]}, {eq: [$input.s, x]}]}", "or"),
    ("not", "{not: {eq: [$input.a, 2]}}", "not"),
    ("lit", '{eq: ["$$x", "$$x"]}', "$lit"),
]


def conditions_workflow() -> str:
    lines = ["name: conds",
             "input: {type: object, properties: {a: {type: integer}, b: {type: integer}, s: {type: string},"
             " list: {type: array}, flag: {type: boolean}}}",
             "state:", "  hits: {type: array, reducer: append}", "  never: {type: string}",
             "output: {hits: $state.hits}", "steps:"]
    for i, (sid, cond, label) in enumerate(_OPS):
        nxt = _OPS[i + 1][0] if i + 1 < len(_OPS) else "end"
        lines.append(f"  - {{id: {sid}, if: {cond}, then: {sid}_t, else: {nxt}}}")
        value = json.dumps(label.replace("$", "$$"))
        lines.append(f"  - {{id: {sid}_t, uses: std.echo, with: {{value: {value}}}, "
                     f"save: {{value: state.hits}}, next: {nxt}}}")
    return "\n".join(lines) + "\n"


_WRITES = [("r", 1), ("ap", [1]), ("ex", [1, 2]), ("un", [1, 2]), ("me", {"a": 1, "b": {"x": 1}}),
           ("ad", 1.5), ("mi", 5), ("ma", 5), ("obj.k", "v"),
           ("r", 2), ("ap", [2]), ("ex", [3]), ("un", [2, 3, [1]]), ("me", {"b": {"y": 2}, "c": 3}),
           ("ad", 2), ("mi", 3), ("ma", 9), ("obj.k2", "w"),
           ("un", 4), ("un", [1]), ("ex", 7), ("mi", 10), ("ma", -1)]


def reducers_workflow() -> str:
    lines = ["name: red", "input: {type: object}", "state:", "  r: {type: integer}",
             "  ap: {type: array, reducer: append}", "  ex: {type: array, reducer: extend}",
             "  un: {type: array, reducer: union}", "  me: {type: object, reducer: merge}",
             "  ad: {type: number, reducer: add}", "  mi: {type: number, reducer: min}",
             "  ma: {type: number, reducer: max}", "  obj: {type: object}",
             "output: {r: $state.r, ap: $state.ap, ex: $state.ex, un: $state.un, me: $state.me,"
             " ad: $state.ad, mi: $state.mi, ma: $state.ma, obj: $state.obj}", "steps:"]
    for i, (target, value) in enumerate(_WRITES):
        nxt = "end" if i == len(_WRITES) - 1 else f"w{i + 1}"
        lines.append(f"  - {{id: w{i}, uses: std.echo, with: {{value: {json.dumps(value)}}}, "
                     f"save: {{value: state.{target}}}, next: {nxt}}}")
    return "\n".join(lines) + "\n"


BAD_REDUCE = """
name: badred
input: {type: object}
state: {total: {type: number, reducer: add}}
output: {total: $state.total}
steps:
  - {id: one, uses: std.echo, with: {value: 1}, save: {value: state.total}, next: two}
  - {id: two, uses: std.echo, with: {value: "x"}, save: {value: state.total}, next: end}
"""

CHILD = """
name: child
input: {type: object, required: [n], properties: {n: {type: integer}}}
state: {n: {type: integer}}
output: {n: $state.n}
steps:
  - {id: z, if: {eq: [$input.n, 0]}, then: zero, else: dbl}
  - {id: dbl, uses: py.double, with: {n: $input.n}, save: {n: state.n}, next: end}
  - {id: zero, end: zero}
"""

PARENT = """
name: parent
input: {type: object, properties: {n: {type: integer}}}
state: {c: {type: object}, err: {type: object}, how: {type: string}}
output: {c: $state.c, err: $state.err, how: $state.how}
steps:
  - id: sub
    workflow: child
    with: {n: $input.n}
    save: state.c
    on: {ok: okay, zero: zeroed}
    catch: {next: caught, save: state.err}
  - {id: okay, uses: std.echo, with: {value: ok}, save: {value: state.how}, next: end}
  - {id: zeroed, end: zero}
  - {id: caught, end: broken}
"""

LOOP = """
name: loop
input: {type: object, properties: {nums: {}, mode: {type: string}}}
state:
  out: {type: array}
  ext: {type: array, reducer: extend}
  errs: {type: array}
  subs: {type: array}
output: {out: $state.out, ext: $state.ext, errs: $state.errs, subs: $state.subs}
steps:
  - id: collect
    foreach: $input.nums
    uses: py.double
    with: {n: $item}
    save: {n: state.out}
    mode: serial
    on_item_error: collect
    errors: state.errs
    next: skip
  - id: skip
    foreach: $input.nums
    uses: py.double
    with: {n: $item}
    save: {n: state.ext}
    mode: parallel
    concurrency: 2
    on_item_error: skip
    next: wf
  - id: wf
    foreach: $input.nums
    workflow: child
    with: {n: $index}
    save: state.subs
    mode: parallel
    next: end
"""

LOOP_FAIL = """
name: loopfail
input: {type: object, properties: {nums: {}}}
state: {out: {type: array}}
output: {out: $state.out}
steps:
  - id: each
    foreach: $input.nums
    uses: py.double
    with: {n: $item}
    save: {n: state.out}
    mode: parallel
    on_item_error: fail
    next: end
"""

RETRY = """
name: retry
input: {type: object, properties: {fails: {type: integer}, counter: {type: string}, secs: {type: number}}}
state: {n: {type: integer}, err: {type: object}, n2: {type: integer}}
output: {n: $state.n, err: $state.err, n2: $state.n2}
steps:
  - id: fl
    uses: py.flaky
    with: {fail_times: $input.fails, counter: $input.counter}
    save: {n: state.n}
    retry: {attempts: 3, backoff: 0.01}
    catch: {next: sl, save: state.err}
    next: sl
  - id: sl
    uses: py.slow
    with: {seconds: $input.secs}
    save: {n: state.n2}
    timeout: 0.3
    next: end
"""

ASK = """
name: ask
input: {type: object, properties: {change: {type: string}}}
state: {decision: {type: object}}
output: {decision: $state.decision}
steps:
  - id: q
    interrupt: approval
    request: {change: $input.change, token: $secret.TOK}
    resume_schema: {type: object, required: [by], properties: {by: {type: string}}}
    save: state.decision
    on: {approved: end, rejected: rej}
  - {id: rej, end: rejected}
"""

OUTER = """
name: outer
input: {type: object}
state: {d: {type: object}}
output: {d: $state.d}
steps:
  - {id: sub, workflow: ask, with: {change: nested}, save: state.d, on: {ok: end, rejected: no}}
  - {id: no, end: nope}
"""

SECRET = """
name: sec
input: {type: object}
state: {v: {type: string}, t: {type: string}}
output: {v: $state.v, t: $state.t}
steps:
  - {id: e, uses: std.echo, with: {value: $secret.TOK}, save: {value: state.v}, next: f}
  - {id: f, uses: std.format, with: {template: "Bearer {t}", values: {t: $secret.TOK}}, save: {text: state.t},
     next: g}
  - {id: g, uses: std.fail, with: {message: $secret.TOK}, next: end}
"""

SLEEPY = """
name: sleepy
input: {type: object, properties: {secs: {}}}
steps:
  - {id: s, uses: std.sleep, with: {seconds: $input.secs}, next: end}
"""

GREET = '''
from pydantic import BaseModel

import wfops


class In(BaseModel):
    name: str


class Out(BaseModel):
    text: str


@wfops.node
def hello(payload: In) -> Out:
    return Out(text="{tag}:" + payload.name)
'''

HI = """
name: hi
input: {type: object, required: [name], properties: {name: {type: string}, opts: {type: object}}}
state: {text: {type: string}}
output: {text: $state.text, opts: $input.opts}
steps:
  - {id: h, uses: greet.hello, with: {name: $input.name}, save: {text: state.text}, next: end}
"""


QUITS = """
name: quits
input: {type: object, properties: {xs: {type: array}, how: {type: string}}}
state: {errs: {type: array}, err: {type: object}}
output: {errs: $state.errs, err: $state.err}
steps:
  - id: items
    foreach: $input.xs
    uses: py.quit_async
    with: {how: x}
    mode: parallel
    on_item_error: collect
    errors: state.errs
    next: sync
  - {id: sync, uses: py.quit_sync, with: {how: $input.how}, catch: {next: last, save: state.err}, next: end}
  - {id: last, uses: py.quit_async, with: {how: x}, next: end}
"""


HUNG = """
name: hung
input: {type: object, properties: {secs: {type: number}}}
steps:
  - {id: b, uses: py.block, with: {seconds: $input.secs}, timeout: 0.3, next: end}
"""


DEFAULTED = """
name: defaulted
input:
  type: object
  required: [n]
  properties:
    n: {type: integer, default: 5}
    opts: {type: object, properties: {k: {type: string, default: kk}}}
state: {inner: {type: object}}
output: {n: $input.n, k: $input.opts.k, inner: $state.inner}
steps:
  - {id: sub, workflow: defaulted_child, with: {}, save: state.inner, next: end}
"""

DEFAULTED_CHILD = """
name: defaulted_child
input: {type: object, properties: {greeting: {type: string, default: hello}}}
state: {}
output: {greeting: $input.greeting}
steps:
  - {id: e, uses: std.echo, with: {value: $input.greeting}, next: end}
"""


TYPED = """
name: typed
input: {type: object}
state:
  n: {type: integer}
  tags: {type: array, items: {type: string}, maxItems: 1, reducer: append}
  many: {type: array, items: {type: integer}, reducer: extend}
  obj: {type: object, properties: {k: {type: integer}}}
  loose: {description: anything goes}
output: {n: $state.n, tags: $state.tags, many: $state.many, obj: $state.obj, loose: $state.loose}
steps:
  - {id: n, uses: std.echo, with: {value: $input.n}, save: {value: state.n}, next: t1}
  - {id: t1, uses: std.echo, with: {value: $input.tag}, save: {value: state.tags}, next: t2}
  - {id: t2, uses: std.echo, with: {value: $input.tag}, save: {value: state.tags}, next: m}
  - {id: m, uses: std.echo, with: {value: $input.many}, save: {value: state.many}, next: k}
  - {id: k, uses: std.echo, with: {value: $input.k}, save: {value: state.obj.k}, next: l}
  - {id: l, uses: std.echo, with: {value: $input.n}, save: {value: state.loose}, next: end}
"""


def deployment(name: str, workflow: str, extra: str = "") -> str:
    return f"name: {name}\nworkflow: {workflow}\n{extra}"


def make_acceptance_project(root: Path) -> Path:
    files = {
        "sources.yaml": ("sources:\n  py: {kind: python, module: nodes}\n"
                         "  impl_a: {kind: python, module: greet_a}\n"
                         "  impl_b: {kind: python, module: greet_b}\n"
                         "  greet: {kind: python, module: greet_self}\n"),
        "nodes.py": NODES,
        "greet_a.py": GREET.replace("{tag}", "a"),
        "greet_b.py": GREET.replace("{tag}", "b"),
        "greet_self.py": GREET.replace("{tag}", "self"),
        "workflows/calls.yaml": CALLS,
        "workflows/conds.yaml": conditions_workflow(),
        "workflows/red.yaml": reducers_workflow(),
        "workflows/badred.yaml": BAD_REDUCE,
        "workflows/child.yaml": CHILD,
        "workflows/parent.yaml": PARENT,
        "workflows/loop.yaml": LOOP,
        "workflows/loopfail.yaml": LOOP_FAIL,
        "workflows/retry.yaml": RETRY,
        "workflows/ask.yaml": ASK,
        "workflows/outer.yaml": OUTER,
        "workflows/sec.yaml": SECRET,
        "workflows/sleepy.yaml": SLEEPY,
        "workflows/hi.yaml": HI,
        "workflows/quits.yaml": QUITS,
        "workflows/hung.yaml": HUNG,
        "workflows/typed.yaml": TYPED,
        "workflows/defaulted.yaml": DEFAULTED,
        "workflows/defaulted_child.yaml": DEFAULTED_CHILD,
        "deployments/calls.yaml": deployment("calls", "calls", "input: {n: 3, v: 1}\n"),
        "deployments/conds.yaml": deployment("conds", "conds",
                                             "input: {a: 1, b: 2, s: x, list: [x, y], flag: true}\n"),
        "deployments/red.yaml": deployment("red", "red"),
        "deployments/badred.yaml": deployment("badred", "badred"),
        "deployments/parent.yaml": deployment("parent", "parent", "input: {n: 2}\n"),
        "deployments/loop.yaml": deployment("loop", "loop", "input: {nums: [1, -2, 3]}\n"),
        "deployments/loopfail.yaml": deployment("loopfail", "loopfail", "input: {nums: [1, -2, -3, 4]}\n"),
        "deployments/retry.yaml": deployment("retry", "retry", "input: {fails: 2, secs: 0}\n"),
        "deployments/ask.yaml": deployment("ask", "ask", "input: {change: x}\nsecrets: [TOK]\n"),
        "deployments/outer.yaml": deployment("outer", "outer", "secrets: [TOK]\n"),
        "deployments/sec.yaml": deployment("sec", "sec", "secrets: [TOK]\n"),
        "deployments/quits.yaml": deployment("quits", "quits", "input: {xs: [1, 2], how: exit}\n"),
        "deployments/defaulted.yaml": deployment("defaulted", "defaulted"),
        "deployments/typed.yaml": deployment("typed", "typed", "input: {n: 1, tag: a, many: [1, 2], k: 3}\n"),
        "deployments/hung.yaml": deployment("hung", "hung", "input: {secs: 0}\n"),
        "deployments/sleepy.yaml": deployment("sleepy", "sleepy", "input: {secs: 0}\n"),
        "deployments/hi_a.yaml": deployment("hi.a", "hi", "bindings: {greet: impl_a}\n"
                                            "input: {name: world, opts: {x: 1, y: {z: 2}}}\n"),
        "deployments/hi_b.yaml": deployment("hi.b", "hi", "bindings: {greet: impl_b}\ndrift: warn\n"
                                            "input: {name: world}\n"),
        "deployments/hi_self.yaml": deployment("hi.self", "hi", "input: {name: me}\n"),
    }
    write(root, files)
    done = wfops(root, "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    return root
