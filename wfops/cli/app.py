"""The typer app, the one declaration of the command line: each command declares its
parameters and returns the call of one plain function (`wfops.cli.<verb>_cmd.run`, which
returns an exit code); the entry point makes that call. Plain command lines are parsed
from a table generated from this app (`wfops.cli.tablegen`), so a change here is a change
of the table (a test regenerates it and compares).

Importing this module must stay cheap: pydantic, ruamel, jsonschema, sqlite3 and
mcp are imported inside the verbs, never here (a test guards this). The error
boundary and the entry point are in `wfops.cli.main`.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

os.environ.setdefault("TYPER_USE_RICH", "0")  # rich costs start-up time and reflows our messages

import typer  # noqa: E402

from wfops.cli.fastparse import VerbCall, version_line

app = typer.Typer(
    name="wfops",
    help="Declarative workflows in git: validate, compile, lock, check and run them.",
    no_args_is_help=True,
    add_completion=True,  # `wfops --install-completion` (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
runs_app = typer.Typer(help="Run history: list, show, trace, fork, prune, rm, copy.", no_args_is_help=True)
caps_app = typer.Typer(help="The capability catalog: list, show, call.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
sources_app = typer.Typer(help="Sources an MCP client wrote: list, approve.", no_args_is_help=True)
app.add_typer(caps_app, name="caps")
app.add_typer(sources_app, name="sources")

Project = Annotated[str | None, typer.Option("--project", help="Project root (default: nearest with sources.yaml or wfops.lock).")]
Db = Annotated[str | None, typer.Option("--db", help="Run store: a SQLite file or a postgresql:// URL (default: $WFOPS_DB or .wfops/wfops.db).")]
Format = Annotated[str, typer.Option("--format", "-f", help="text, json, github or sarif.")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
Executor = Annotated[str | None, typer.Option("--executor", help="Where capability calls run: local, or dask://HOST:PORT (a Dask scheduler).")]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_line(), nl=False)
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """Declarative workflows in git: validate, compile, lock, check and run them."""


def _verb(module: str, function: str = "run", /, **kwargs: Any) -> VerbCall:
    """The call of `wfops.cli.<module>.<function>(**kwargs)` the command stands for.

    A command only says what it calls: the entry point makes the call, whichever parser read
    the command line, and the table generator reads each command's mapping by calling it."""
    return VerbCall(module, function, kwargs)


@app.command()
def init(directory: Annotated[str, typer.Argument(help="Where to create the project.")] = ".",
         force: Annotated[bool, typer.Option(help="Overwrite the files the scaffold writes (an existing .gitignore is appended to).")] = False) -> VerbCall:
    """Scaffold a working project: sources, a workflow, a deployment, pre-commit and CI config."""
    return _verb("init_cmd", directory=directory, force=force)


@app.command()
def validate(paths: Annotated[list[str] | None, typer.Argument(help="Files to report on (default: the whole project).")] = None,
             format: Format = "text", project: Project = None) -> VerbCall:
    """Check syntax, schema and static rules. Exit 0 clean, 1 errors."""
    return _verb("validate_cmd", paths=paths or [], format=format, project=project)


@app.command("test")
def test_(paths: Annotated[list[str] | None, typer.Argument(help="Test files or folders (default: tests/, recursively).")] = None,
          pattern: Annotated[str | None, typer.Option("-k", help="Only cases whose `file::name` contains this.")] = None,
          format: Annotated[str, typer.Option("--format", "-f", help="text, json, junit or github.")] = "text",
          output: Annotated[str | None, typer.Option("--output", "-o", help="Write the report to this file.")] = None,
          project: Project = None) -> VerbCall:
    """Run the workflow tests (*.wftest.yaml) with mocked capabilities. Exit 0 passed, 1 failed, 2 invalid."""
    return _verb("test_cmd", paths=paths or [], pattern=pattern, format=format, output=output, project=project)


@app.command("compile")
def compile_(out: Annotated[str | None, typer.Option("--out", help="Also write one artifact JSON per workflow here.")] = None,
             format: Format = "text", project: Project = None) -> VerbCall:
    """Validate, snapshot capability contracts and write wfops.lock."""
    return _verb("compile_cmd", out=out, format=format, project=project)


@app.command()
def check(live: Annotated[bool, typer.Option("--live", help="Also contact MCP sources.")] = False,
          format: Format = "text", project: Project = None) -> VerbCall:
    """Compare the project with wfops.lock (for pre-commit and CI). Exit 1 on drift or errors."""
    return _verb("check_cmd", live=live, format=format, project=project)


@app.command()
def run(deployment: Annotated[str, typer.Argument(help="Deployment name.")],
        input: Annotated[list[str] | None, typer.Option("--input", "-i", help="K=V (V parsed as JSON when it parses).")] = None,
        input_file: Annotated[str | None, typer.Option("--input-file", help="JSON or YAML file with the input.")] = None,
        executor: Executor = None, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Execute a deployment. Exit 0 completed, 1 failed, 2 refused, 3 interrupted, 6 cancelled (Ctrl-C)."""
    return _verb("run_cmd", deployment=deployment, inputs=input or [], input_file=input_file, json_out=json,
          project=project, db=db, executor=executor)


@app.command()
def resume(run_id: Annotated[str, typer.Argument(help="The run to continue.")],
           outcome: Annotated[str | None, typer.Option("--outcome", help="Outcome that answers the open interrupt.")] = None,
           payload: Annotated[str | None, typer.Option("--payload", help="JSON payload for the interrupt.")] = None,
           executor: Executor = None, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Continue an interrupted, crashed or cancelled run, or redrive a failed one from its failed step."""
    return _verb("run_cmd", "resume", run_id=run_id, outcome=outcome, payload=payload, json_out=json, project=project,
          db=db, executor=executor)


@app.command()
def cancel(run_id: Annotated[str, typer.Argument(help="The run to stop.")],
           json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Stop a run: its driver stops at the next step boundary; one nobody drives is cancelled at once."""
    return _verb("run_cmd", "cancel", run_id=run_id, json_out=json, project=project, db=db)


@runs_app.command("list")
def runs_list(deployment: Annotated[str | None, typer.Option("--deployment")] = None,
              status: Annotated[str | None, typer.Option("--status")] = None,
              limit: Annotated[int, typer.Option("--limit", min=1)] = 20,
              json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Run history, newest first."""
    return _verb("runs_cmd", action="list", deployment=deployment, status=status, limit=limit, json_out=json,
          project=project, db=db)


@runs_app.command("show")
def runs_show(run_id: str, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """One run's status, outcome, output and open interrupt."""
    return _verb("runs_cmd", action="show", run_id=run_id, json_out=json, project=project, db=db)


@runs_app.command("trace")
def runs_trace(run_id: str,
               from_seq: Annotated[int | None, typer.Option("--from", help="First seq to show.")] = None,
               limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
               json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """A run's step trace in order."""
    return _verb("runs_cmd", action="trace", run_id=run_id, from_seq=from_seq, limit=limit, json_out=json,
          project=project, db=db)


@runs_app.command("fork")
def runs_fork(run_id: str,
              from_step: Annotated[str, typer.Option("--from", help="Start before this (top-level) step.")],
              input: Annotated[list[str] | None, typer.Option("--input", "-i", help="K=V over the original input.")] = None,
              input_file: Annotated[str | None, typer.Option("--input-file", help="JSON or YAML file over the original input.")] = None,
              json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Start a new run from the state a run had just before STEP (the original is untouched)."""
    return _verb("run_cmd", "fork", run_id=run_id, from_step=from_step, inputs=input or [], input_file=input_file,
          json_out=json, project=project, db=db)


@runs_app.command("prune")
def runs_prune(older_than: Annotated[float, typer.Option("--older-than", help="Days.", min=0)],
               project: Project = None, db: Db = None) -> VerbCall:
    """Delete finished runs older than N days."""
    return _verb("runs_cmd", action="prune", older_than=older_than, project=project, db=db)


@runs_app.command("rm")
def runs_rm(run_id: str,
            force: Annotated[bool, typer.Option("--force", help="Also delete an unfinished run "
                                                "(interrupted, or crashed).")] = False,
            project: Project = None, db: Db = None) -> VerbCall:
    """Delete one finished run and its trace."""
    return _verb("runs_cmd", action="rm", run_id=run_id, force=force, project=project, db=db)


@runs_app.command("copy")
def runs_copy(to: Annotated[str, typer.Option("--to", help="Target store: a postgresql:// URL (or a SQLite file).")],
              json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Copy the run history (default: the local store) into another store; copying twice adds nothing."""
    return _verb("runs_cmd", action="copy", to=to, json_out=json, project=project, db=db)


@app.command()
def graph(workflow: str,
          format: Annotated[str, typer.Option("--format", "-f", help="mermaid or dot.")] = "mermaid",
          project: Project = None) -> VerbCall:
    """Draw a workflow's steps and routes."""
    return _verb("graph_cmd", workflow=workflow, format=format, project=project)


@caps_app.command("list")
def caps_list(source: Annotated[str | None, typer.Option("--source")] = None,
              json: Json = False, project: Project = None) -> VerbCall:
    """Every capability of every source."""
    return _verb("caps_cmd", action="list", source=source, json_out=json, project=project)


@caps_app.command("show")
def caps_show(ref: str, json: Json = False, project: Project = None) -> VerbCall:
    """One capability's docs and schemas."""
    return _verb("caps_cmd", action="show", ref=ref, json_out=json, project=project)


@caps_app.command("call")
def caps_call(ref: str, input_file: Annotated[str, typer.Option("--input-file")],
              project: Project = None) -> VerbCall:
    """Call one capability with an input file (JSON or YAML) and print its result."""
    return _verb("caps_cmd", action="call", ref=ref, input_file=input_file, project=project)


@app.command()
def schema(kind: Annotated[str, typer.Option("--kind", help="workflow, deployment, sources or wftest.")] = "workflow") -> VerbCall:
    """Print the JSON Schema of a file format (for editors)."""
    return _verb("schema_cmd", kind=kind)


@app.command()
def watch(run: Annotated[str | None, typer.Option("--run", help="Rerun this deployment after each valid change.")] = None,
          project: Project = None, db: Db = None) -> VerbCall:
    """Revalidate (and rerun) on every change."""
    return _verb("watch_cmd", deployment=run, project=project, db=db)


@app.command()
def mcp(project: Project = None, db: Db = None,
        allow_client_sources: Annotated[bool, typer.Option(
            "--allow-client-sources",
            help="Let sources the MCP client writes run without a person's approval.")] = False) -> VerbCall:
    """Serve this project to MCP clients over stdio."""
    return _verb("mcp_cmd", project=project, db=db, allow_client_sources=allow_client_sources)


@sources_app.command("list")
def sources_list(json: Json = False, project: Project = None) -> VerbCall:
    """Sources an MCP client wrote that wait for a person's approval."""
    return _verb("sources_cmd", action="list", json_out=json, project=project)


@sources_app.command("approve")
def sources_approve(source: Annotated[str, typer.Argument(help="The source's id in sources.yaml.")],
                    json: Json = False, project: Project = None) -> VerbCall:
    """Show a source an MCP client wrote and approve it as declared."""
    return _verb("sources_cmd", action="approve", source=source, json_out=json, project=project)
