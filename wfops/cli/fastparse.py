"""Plain command lines parsed from the command table, without importing typer.

typer builds click commands for the whole app, then a pydantic TypeAdapter for every
parameter of the command it runs: ~100-200 ms before any work, on every command. The
typer app (`wfops.cli.app`) stays the one declaration of every command's parameters;
`argtable.py` is that declaration written out as plain data by `wfops.cli.tablegen`
(a test regenerates it and compares). A plain command line becomes the `VerbCall` the
app's command would return for it. Anything else (help, completion, an unknown or
malformed option, a missing argument, a value typer would reject or that is not plainly
written) gives None and goes through typer as usual, so its messages and exit codes stay
typer's.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any, NamedTuple

from wfops import __version__
from wfops.cli.argtable import HELP, TABLE


class VerbCall(NamedTuple):
    """`wfops.cli.<module>.<function>(**kwargs)`: what a command line asks for."""

    module: str
    function: str
    kwargs: dict[str, Any]


def version_line() -> str:
    """What `wfops --version` prints, whichever parser read the command line."""
    return f"wfops {__version__}\n"


def invoke(call: VerbCall) -> int:
    """Make the call; its exit code."""
    code = getattr(import_module(f"wfops.cli.{call.module}"), call.function)(**call.kwargs)
    return int(code or 0)


def parse(argv: list[str]) -> VerbCall | None:
    """The call the app's command would return for `argv`, or None when typer should decide."""
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None  # shell completion: typer's
    path = argv[:2] if " ".join(argv[:2]) in TABLE else argv[:1]
    entry = TABLE.get(" ".join(path))
    if entry is None:
        return None
    given = _given(entry["params"], argv[len(path):])
    if given is None:
        return None
    verb = entry["verb"]
    return VerbCall(verb["module"], verb["function"], {
        arg["kwarg"]: arg["const"] if "const" in arg else
        given[arg["param"]] if arg["param"] in given else _fresh(arg["absent"]) for arg in verb["args"]})


def _given(params: list[dict[str, Any]], rest: list[str]) -> dict[str, Any] | None:
    """The value of each parameter the command line gives, or None when typer should decide."""
    options = {opt: p for p in params if p["kind"] == "option" for opt in (*p["opts"], *p["secondary"])}
    values: dict[str, Any] = {}
    positional: list[str] = []
    index = 0
    while index < len(rest):
        token = rest[index]
        index += 1
        if token in HELP or token == "--":
            return None
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        # `--name=value`; a short option with anything attached (`-fjson`, `-i=a`) is typer's
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        param = options.get(name)
        if param is None:
            return None
        if param["flag"]:
            if eq:
                return None
            values[param["name"]] = name in param["opts"]
            continue
        if eq:
            raw = inline
        elif index < len(rest):
            raw, index = rest[index], index + 1
        else:
            return None  # an option without its value: typer says so
        value = _convert(param, raw)
        if value is None:
            return None
        if param["multiple"]:
            values.setdefault(param["name"], []).append(value)
        else:
            values[param["name"]] = value
    for param in (p for p in params if p["kind"] == "argument"):
        taken, positional = (positional, []) if param["nargs"] == -1 else (positional[:1], positional[1:])
        converted = [_convert(param, raw) for raw in taken]
        if None in converted:
            return None
        if converted:
            values[param["name"]] = converted if param["nargs"] == -1 else converted[0]
    if positional or any(p["required"] and p["name"] not in values for p in params):
        return None  # too many arguments, or a missing one: typer says which
    return values


def _convert(param: dict[str, Any], raw: str) -> Any:
    """The value typer would pass, or None when typer would reject it (it then reports it)."""
    kind = param["type"]
    if kind == "str":
        return raw
    # Plain decimal numbers only: signs, spaces, underscores, exponents, `inf` are typer's.
    digits = raw[1:] if raw.startswith("-") else raw
    whole, dot, fraction = digits.partition(".") if kind == "float" else (digits, "", "")
    if not (_decimal(whole) and (not dot or _decimal(fraction))):
        return None
    number: int | float = int(raw) if kind == "int" else float(raw)
    low, high = param["min"], param["max"]
    if (low is not None and number < low) or (high is not None and number > high):
        return None
    return number


def _decimal(text: str) -> bool:
    # str.isdigit also takes other scripts' digits and superscripts; typer's int() differs on some
    return text != "" and all("0" <= char <= "9" for char in text)


def _fresh(value: Any) -> Any:
    """A copy of a table default the callee could change (the table lives as long as the process)."""
    return list(value) if isinstance(value, list) else value
