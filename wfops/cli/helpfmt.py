"""Help text as a shell user reads it: `--project PROJECT`, `RUN_ID`, not typer's
`<str>` / `<list[str]>` (Python type names), and whole command summaries in a group's list.

Only `--help` builds these classes (through the typer app); a plain command line never does.
"""

from __future__ import annotations

from typing import Any

from typer._click import Context, HelpFormatter
from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder


def _record(param: Any, ctx: Context) -> tuple[str, str] | None:
    record = param.get_help_record(ctx)
    if record is None:
        return None
    names, text = record
    shown = param.display_type_rich(ctx)
    if shown and param.metavar is None:
        plain = (param.name or "value").upper() + ("..." if param.nargs != 1 else "")
        names = names.replace(f"... {shown}", " " + plain).replace(f" {shown}", " " + plain) \
            if param.param_type_name == "option" else plain
    return names, text


class PlainHelpCommand(TyperCommand):
    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        args: list[tuple[str, str]] = []
        opts: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = _record(param, ctx)
            if record is not None:
                (args if param.param_type_name == "argument" else opts).append(record)
        for title, rows in (("Arguments", args), ("Options", opts)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class PlainHelpGroup(TyperGroup):
    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        rows = [r for r in (_record(p, ctx) for p in self.get_params(ctx)) if r is not None]
        if rows:
            with formatter.section("Options"):
                formatter.write_dl(rows)
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        listed = [(name, cmd.get_short_help_str(limit=300)) for name, cmd in commands
                  if cmd is not None and not cmd.hidden]
        if listed:
            with formatter.section("Commands"):
                formatter.write_dl(listed)


def _default(cls: Any, default: type) -> bool:
    return cls is None or cls is default or isinstance(cls, DefaultPlaceholder)


def plain_help(app: Any) -> None:
    """Give every command and group of `app` (a `typer.Typer`) the plain help classes."""
    if _default(app.info.cls, TyperGroup):  # a class of a command's own is left alone
        app.info.cls = PlainHelpGroup
    for command in app.registered_commands:
        if _default(command.cls, TyperCommand):
            command.cls = PlainHelpCommand
    for group in app.registered_groups:
        if _default(group.cls, TyperGroup):
            group.cls = PlainHelpGroup
        if group.typer_instance is not None:
            plain_help(group.typer_instance)
