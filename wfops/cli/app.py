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

from wfops.cli import complete
from wfops.cli.fastparse import VerbCall, version_line
from wfops.cli.helpfmt import plain_help

app = typer.Typer(
    name="wfops",
    help="Declarative workflows in git: validate, compile, lock, check and run them.",
    no_args_is_help=True,
    add_completion=True,  # `wfops --install-completion` (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
runs_app = typer.Typer(help="Run history: list, show, trace, logs, fork, prune, rm, copy.", no_args_is_help=True)
caps_app = typer.Typer(help="The capability catalog: list, show, call.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
sources_app = typer.Typer(help="Sources an MCP client wrote: list, approve.", no_args_is_help=True)
app.add_typer(caps_app, name="caps")
app.add_typer(sources_app, name="sources")
cache_app = typer.Typer(help="The step cache in the run store: list, show, clear.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
schedule_app = typer.Typer(help="Deployments' schedules: tick (start what is due), list, next.", no_args_is_help=True)
app.add_typer(schedule_app, name="schedule")
ci_app = typer.Typer(help="CI files generated from the project: schedule.", no_args_is_help=True)
app.add_typer(ci_app, name="ci")

Project = Annotated[str | None, typer.Option("--project", help="Project root (default: nearest with sources.yaml or wfops.lock).")]
Db = Annotated[str | None, typer.Option("--db", help="Run store: a SQLite file or a postgresql:// URL (default: $WFOPS_DB or .wfops/wfops.db).")]
Format = Annotated[str, typer.Option("--format", "-f", help="text, json, github or sarif.")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
JsonList = Annotated[bool, typer.Option("--json", help="Print one JSON array.")]
RunId = Annotated[str, typer.Argument(help="A run id, `last` (the newest run) or `last:DEPLOYMENT`.",
                                      autocompletion=complete.runs)]
CapRef = Annotated[str, typer.Argument(help="SOURCE.CAPABILITY", autocompletion=complete.capabilities)]
Executor = Annotated[str | None, typer.Option("--executor", help="Where capability calls run: local, or dask://HOST:PORT (a Dask scheduler).")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Run every step: the step cache is neither read nor written.")]


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
         force: Annotated[bool, typer.Option(help="Overwrite the files the scaffold writes (an existing .gitignore is appended to).")] = False,
         wfops_spec: Annotated[str | None, typer.Option("--wfops-spec", help="What CI passes to `pip install` to get wfops "
                                                        "(default: how this wfops was installed).")] = None,
         example: Annotated[str | None, typer.Option("--example", help="Write this worked example instead of "
                                                     "the hello workflow: approval, fanout, meeting-report or "
                                                     "world-clock.")] = None) -> VerbCall:
    """Scaffold a working project: sources, a workflow, a deployment, pre-commit and CI config."""
    return _verb("init_cmd", directory=directory, force=force, wfops_spec=wfops_spec, example=example)


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
          no_cache: NoCache = False, project: Project = None) -> VerbCall:
    """Run the workflow tests (*.wftest.yaml) with mocked capabilities. Exit 0 passed, 1 failed, 2 invalid."""
    return _verb("test_cmd", paths=paths or [], pattern=pattern, format=format, output=output, project=project,
                 no_cache=no_cache)


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
def run(deployment: Annotated[str, typer.Argument(help="Deployment name.", autocompletion=complete.deployments)],
        input: Annotated[list[str] | None, typer.Option("--input", "-i", help="K=V (V parsed as JSON when it parses).")] = None,
        input_file: Annotated[str | None, typer.Option("--input-file", help="JSON or YAML file with the input.")] = None,
        executor: Executor = None,
        unlocked: Annotated[bool, typer.Option("--unlocked", help="Run the working tree after a full validate, "
                                               "without wfops.lock (the dev loop; refused when CI is set).")] = False,
        no_cache: NoCache = False, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Execute a deployment. Exit 0 completed, 1 failed, 2 refused, 3 interrupted, 6 cancelled (Ctrl-C)."""
    return _verb("run_cmd", deployment=deployment, inputs=input or [], input_file=input_file, json_out=json,
          project=project, db=db, executor=executor, unlocked=unlocked, no_cache=no_cache)


@app.command()
def resume(run_id: RunId,
           outcome: Annotated[str | None, typer.Option("--outcome", help="Outcome that answers the open interrupt.")] = None,
           payload: Annotated[str | None, typer.Option("--payload", help="JSON payload for the interrupt.")] = None,
           executor: Executor = None, no_cache: NoCache = False, json: Json = False, project: Project = None,
           db: Db = None) -> VerbCall:
    """Continue an interrupted, crashed or cancelled run, or redrive a failed one from its failed step."""
    return _verb("run_cmd", "resume", run_id=run_id, outcome=outcome, payload=payload, json_out=json, project=project,
          db=db, executor=executor, no_cache=no_cache)


@app.command()
def cancel(run_id: RunId,
           json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Stop a run: its driver stops at the next step boundary; one nobody drives is cancelled at once."""
    return _verb("run_cmd", "cancel", run_id=run_id, json_out=json, project=project, db=db)


@runs_app.command("list")
def runs_list(deployment: Annotated[str | None, typer.Option("--deployment", help="Only runs of this deployment.")] = None,
              status: Annotated[str | None, typer.Option("--status")] = None,
              limit: Annotated[int, typer.Option("--limit", min=1)] = 20,
              since: Annotated[str | None, typer.Option("--since", help="Only runs started in the last 30m, 2h, "
                                                       "3d, 1w, or since an ISO date or time (UTC).")] = None,
              json: JsonList = False, project: Project = None, db: Db = None,
              scheduled: Annotated[bool, typer.Option("--scheduled", help="Only runs a schedule started.")] = False,
              ) -> VerbCall:
    """Run history, newest first (--status: running, completed, failed, interrupted or cancelled)."""
    return _verb("runs_cmd", action="list", deployment=deployment, status=status, limit=limit, since=since,
          json_out=json, project=project, db=db, scheduled=scheduled)


@runs_app.command("show")
def runs_show(run_id: RunId, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """One run's status, outcome, output and open interrupt."""
    return _verb("runs_cmd", action="show", run_id=run_id, json_out=json, project=project, db=db)


@runs_app.command("trace")
def runs_trace(run_id: RunId,
               from_seq: Annotated[int | None, typer.Option("--from", help="First seq to show.")] = None,
               limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
               json: JsonList = False, project: Project = None, db: Db = None) -> VerbCall:
    """A run's step trace in order."""
    return _verb("runs_cmd", action="trace", run_id=run_id, from_seq=from_seq, limit=limit, json_out=json,
          project=project, db=db)


@runs_app.command("logs")
def runs_logs(run_id: RunId,
              step: Annotated[str | None, typer.Argument(help="Only this step's logs (its attempts, and a "
                                                         "foreach's items).")] = None,
              json: JsonList = False, project: Project = None, db: Db = None) -> VerbCall:
    """What a run's python nodes printed and logged, per step attempt (a failure's traceback too)."""
    return _verb("runs_cmd", action="logs", run_id=run_id, step=step, json_out=json, project=project, db=db)


@runs_app.command("fork")
def runs_fork(run_id: RunId,
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
def runs_rm(run_id: RunId,
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


Deployment = Annotated[str | None, typer.Option("--deployment", help="Only the entries of this deployment.")]
OlderThan = Annotated[str | None, typer.Option("--older-than", help="Only entries made longer ago: 30s, 10m, 1h, 7d.")]


@cache_app.command("list")
def cache_list(deployment: Deployment = None, older_than: OlderThan = None, json: Json = False,
               project: Project = None, db: Db = None) -> VerbCall:
    """Step cache entries, newest first."""
    return _verb("cache_cmd", action="list", deployment=deployment, older_than=older_than, json_out=json,
                 project=project, db=db)


@cache_app.command("show")
def cache_show(key: Annotated[str, typer.Argument(help="The entry's key, or the start of it.")],
               json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """One step cache entry, with its output."""
    return _verb("cache_cmd", action="show", key=key, json_out=json, project=project, db=db)


@cache_app.command("clear")
def cache_clear(deployment: Deployment = None, older_than: OlderThan = None, json: Json = False,
                project: Project = None, db: Db = None) -> VerbCall:
    """Remove step cache entries (none a live run was served from)."""
    return _verb("cache_cmd", action="clear", deployment=deployment, older_than=older_than, json_out=json,
                 project=project, db=db)


@app.command()
def graph(workflow: Annotated[str, typer.Argument(help="Workflow name.", autocompletion=complete.workflows)],
          format: Annotated[str, typer.Option("--format", "-f", help="mermaid or dot.")] = "mermaid",
          project: Project = None) -> VerbCall:
    """Draw a workflow's steps and routes."""
    return _verb("graph_cmd", workflow=workflow, format=format, project=project)


@caps_app.command("list")
def caps_list(source: Annotated[str | None, typer.Option("--source")] = None,
              json: JsonList = False, project: Project = None) -> VerbCall:
    """Every capability of every source."""
    return _verb("caps_cmd", action="list", source=source, json_out=json, project=project)


@caps_app.command("show")
def caps_show(ref: CapRef, json: Json = False, project: Project = None) -> VerbCall:
    """One capability's docs and schemas."""
    return _verb("caps_cmd", action="show", ref=ref, json_out=json, project=project)


@caps_app.command("call")
def caps_call(ref: CapRef, input_file: Annotated[str, typer.Option("--input-file")],
              project: Project = None) -> VerbCall:
    """Call one capability with an input file (JSON or YAML) and print its result."""
    return _verb("caps_cmd", action="call", ref=ref, input_file=input_file, project=project)


@app.command()
def schema(kind: Annotated[str, typer.Option("--kind", help="workflow, deployment, sources or wftest.")] = "workflow") -> VerbCall:
    """Print the JSON Schema of a file format (for editors)."""
    return _verb("schema_cmd", kind=kind)


@app.command()
def watch(run: Annotated[str | None, typer.Option("--run", help="Rerun this deployment after each valid change.")] = None,
          unlocked: Annotated[bool, typer.Option("--unlocked", help="Rerun the working tree without wfops.lock "
                                                 "(as `run --unlocked`).")] = False,
          project: Project = None, db: Db = None) -> VerbCall:
    """Revalidate (and rerun) on every change."""
    return _verb("watch_cmd", deployment=run, unlocked=unlocked, project=project, db=db)


@app.command()
def mcp(project: Project = None, db: Db = None,
        allow_client_sources: Annotated[bool, typer.Option(
            "--allow-client-sources",
            help="Let sources the MCP client writes run without a person's approval.")] = False,
        http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at /mcp instead of stdio.")] = False,
        host: Annotated[str, typer.Option("--host", help="With --http: the address to listen on; any but "
                                                        "loopback needs WFOPS_MCP_TOKEN.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="With --http: the port.")] = 8000) -> VerbCall:
    """Serve this project to MCP clients over stdio (or streamable HTTP with --http)."""
    return _verb("mcp_cmd", project=project, db=db, allow_client_sources=allow_client_sources, http=http,
                 host=host, port=port)


@app.command()
def ui(host: Annotated[str, typer.Option("--host", help="Address to listen on; other than loopback needs $WFOPS_UI_TOKEN.")] = "127.0.0.1",
       port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: any free one).")] = 8765,
       db: Db = None,
       read_only: Annotated[bool, typer.Option("--read-only", help="Show runs; refuse every action.")] = False,
       open: Annotated[bool, typer.Option("--open", help="Open the address in a browser.")] = False,
       project: Project = None) -> VerbCall:
    """Serve runs, traces, graphs and the project to a browser (loopback by default)."""
    return _verb("ui_cmd", project=project, db=db, host=host, port=port, read_only=read_only, open_browser=open)


@sources_app.command("list")
def sources_list(json: JsonList = False, project: Project = None) -> VerbCall:
    """Sources an MCP client wrote that wait for a person's approval."""
    return _verb("sources_cmd", action="list", json_out=json, project=project)


@sources_app.command("approve")
def sources_approve(source: Annotated[str, typer.Argument(help="The source's id in sources.yaml.")],
                    json: Json = False, project: Project = None) -> VerbCall:
    """Show a source an MCP client wrote and approve it as declared."""
    return _verb("sources_cmd", action="approve", source=source, json_out=json, project=project)


At = Annotated[str | None, typer.Option("--at", help="The moment, ISO 8601 with an offset or Z (default: now).")]


@schedule_app.command("tick")
def schedule_tick(at: At = None,
                  dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would start.")] = False,
                  json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Start every scheduled run due now (or --at), once per slot; call it every minute."""
    return _verb("schedule_cmd", action="tick", at=at, dry_run=dry_run, json_out=json, project=project, db=db)


@schedule_app.command("list")
def schedule_list(count: Annotated[int, typer.Option("--count", "-n", min=0, help="Next times per entry.")] = 3,
                  at: At = None, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """Every schedule entry: its next times (its time zone and UTC) and its last run."""
    return _verb("schedule_cmd", action="list", count=count, at=at, json_out=json, project=project, db=db)


@schedule_app.command("next")
def schedule_next(deployment: str,
                  count: Annotated[int, typer.Option("--count", "-n", min=0, help="Next times per entry.")] = 5,
                  at: At = None, json: Json = False, project: Project = None, db: Db = None) -> VerbCall:
    """The next times one deployment's schedule starts a run."""
    return _verb("schedule_cmd", action="next", deployment=deployment, count=count, at=at, json_out=json,
                 project=project, db=db)


@ci_app.command("schedule")
def ci_schedule(json: Json = False, project: Project = None) -> VerbCall:
    """Write (or refresh) the scheduled GitHub Actions workflow from the deployments' schedules."""
    return _verb("ci_cmd", action="schedule", json_out=json, project=project)


# Last in this module, after every command is declared: help without Python type names.
plain_help(app)
