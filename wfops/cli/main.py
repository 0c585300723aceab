"""The entry point and the one error boundary of the `wfops` command.

Known errors print one line and exit with their code; bugs print where the crash
log is. Plain command lines are parsed from the command table generated from the typer
app (`fastparse`), without importing typer; only help, completion and malformed command
lines build typer's parser. Either way the command line becomes one `VerbCall`, made
here. `validate` of the whole project (pre-commit, every commit) and `check` without
`--live` are first answered from their records when their inputs are unchanged.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from wfops import exits
from wfops.cli.argtable import TABLE
from wfops.cli.fastparse import VerbCall, invoke, parse, version_line
from wfops.cli.pipes import closed_pipes_dropped
from wfops.errors import UsageError as WfopsUsageError
from wfops.errors import WfopsError
from wfops.exits import INTERRUPTED
from wfops.fastpath.replay import CHECK_FILE, replay_project_report

#: The command groups (`runs list`), read off the generated table of the typer app's commands.
_GROUPS = frozenset(name.split()[0] for name in TABLE if " " in name)


def main(argv: list[str] | None = None) -> None:
    args = _project_after_verb(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:  # eager, as typer's root option is: nothing after it is read
        sys.stdout.write(version_line())
        sys.exit(0)
    with closed_pipes_dropped():
        _boundary(args)


def _boundary(args: list[str]) -> None:
    try:
        call = parse(args)
        sys.exit(_run(call) if call is not None else _run_typer(args))
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("wfops: interrupted\n")
        sys.exit(INTERRUPTED)
    except BaseException as exc:  # noqa: BLE001 - the boundary: never a raw traceback
        # deferred: cache-hit path (a hit neither fails nor crashes: no crash log, no URL to redact)
        from wfops.crashlog import report_crash
        from wfops.dburl import redact
        from wfops.redact import mask

        if isinstance(exc, WfopsError):
            sys.stderr.write(f"wfops: error: {mask(redact(exc.message))}\n")
            if exc.hint:
                sys.stderr.write(f"  hint: {mask(redact(exc.hint))}\n")
            sys.exit(exits.for_error(exc))
        sys.exit(report_crash(exc))


def _run(call: VerbCall) -> int:
    """Make the call a command line stands for; its exit code."""
    hit = None
    if (call.module, call.function) == ("validate_cmd", "run") and not call.kwargs["paths"]:
        hit = replay_project_report(call.kwargs["project"], call.kwargs["format"])
    elif (call.module, call.function) == ("check_cmd", "run") and not call.kwargs["live"]:
        hit = replay_project_report(call.kwargs["project"], call.kwargs["format"], CHECK_FILE)
    if hit is not None:
        sys.stdout.write(hit[0])
        return 0 if hit[1] else 1
    return invoke(call)


def _project_after_verb(args: list[str]) -> list[str]:
    """`wfops --project DIR validate ...` means `wfops validate --project DIR ...`.

    `--project` belongs to each command, but users also write it first (as with
    `git -C`); it is moved behind the command (and the sub-command of a group: `runs`,
    `caps`, `sources`).
    """
    if not args or not (args[0] == "--project" or args[0].startswith("--project=")):
        return args
    taken = 1 if "=" in args[0] else 2
    option, rest = args[:taken], args[taken:]
    verb = 2 if rest and rest[0] in _GROUPS else 1
    if len(option) != taken or len(rest) < verb:
        return args  # incomplete: let the parser say what is missing
    return [*rest[:verb], *option, *rest[verb:]]


def _run_typer(args: list[str]) -> int:
    """Parse with the typer app; click's own outcomes become exit codes and one-line messages."""
    # Before typer is imported: rich costs start-up time and reflows our one-line messages.
    os.environ.setdefault("TYPER_USE_RICH", "0")
    # deferred: typer (~33 ms) and the app built on it; `wfops validate` (pre-commit) runs without
    from typer import Abort, Exit
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

    from wfops.cli.app import app

    try:
        code = app(args=args, standalone_mode=False, prog_name="wfops")
        if isinstance(code, VerbCall):  # parsed: the call is made outside typer, as for a plain line
            return _run(code)
        if code == INTERRUPTED:  # typer turns Ctrl-C into a silent Exit(130); say what happened
            sys.stderr.write("wfops: interrupted\n")
        # Without standalone mode click *returns* the code of a typer.Exit instead of exiting.
        return code if isinstance(code, int) else 0
    except Exit as exc:
        return int(exc.exit_code)
    except NoArgsIsHelpError as exc:
        sys.stdout.write(exc.ctx.get_help() + "\n" if exc.ctx else "")
        return 0 if args == [] else 2
    except UsageError as exc:
        message = exc.format_message().splitlines()[0]
        _json_refusal(args, message)
        sys.stderr.write(f"wfops: error: {message}\n")
        return 2
    except ClickException as exc:
        sys.stderr.write(f"wfops: error: {exc.format_message()}\n")
        return exc.exit_code
    except Abort:
        sys.stderr.write("wfops: interrupted\n")
        return INTERRUPTED


def _json_refusal(args: list[str], message: str) -> None:
    """`run`/`resume --json` print one JSON object even when the command line does not parse."""
    if len(args) < 1 or args[0] not in ("run", "resume") or "--json" not in args:
        return
    # deferred: the run command (and the API behind it) is not needed on the validate cache-hit path
    from wfops.cli.output import print_json
    from wfops.cli.run_cmd import refusal

    print_json(refusal(WfopsUsageError(message), run_id=None, deployment=None))


def __getattr__(name: str) -> Any:
    if name == "app":  # the typer app, for tests and docs generators
        from wfops.cli.app import app  # deferred: typer (~33 ms)

        return app
    raise AttributeError(name)
