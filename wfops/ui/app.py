"""The web app: three page shells and the JSON they read, each answer one `Project` call.

The shells (`static/page.html`) hold no data, only the page's name and its CSRF token; the
script (`static/app.js`) asks the `/api/...` routes for JSON and sets every value as text.
Sync `Project` calls run in a daemon thread each (`wfops.daemon`), so a long action (a
resumed run driven to its end) never holds the event loop, and other pages keep answering.
"""

from __future__ import annotations

import html
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from wfops.api import Project
from wfops.api.browse import RUN_FOLD_BYTES, fold
from wfops.crashlog import report_crash
from wfops.daemon import in_daemon_thread
from wfops.dburl import redact
from wfops.errors import InvalidArgument, RunBusyError, UnknownRunError, UsageError, WfopsError
from wfops.redact import mask, masked
from wfops.ui.guard import Access, Guard

STATIC = Path(str(files("wfops.ui") / "static"))
PAGES = ("runs", "run", "project")


@dataclass(frozen=True)
class UiOptions:
    read_only: bool = False


def build_app(project: Project, access: Access, options: UiOptions) -> Guard:
    """The ASGI app serving `project`, behind its guard."""
    shell = (STATIC / "page.html").read_text(encoding="utf-8")
    view = _View(project, options, shell, access.csrf)
    routes = [
        Route("/", view.page("runs")),
        Route("/runs/{run_id}", view.page("run")),
        Route("/project", view.page("project")),
        Route("/api/runs", view.runs),
        Route("/api/runs/{run_id}", view.run),
        Route("/api/runs/{run_id}/trace", view.trace),
        Route("/api/runs/{run_id}/graph", view.graph),
        Route("/api/runs/{run_id}/value", view.value),
        Route("/api/runs/{run_id}/logs", view.logs),
        Route("/api/project", view.overview),
        Route("/api/project/check", view.check),
        Route("/api/project/capabilities", view.capabilities),
        Route("/api/runs/{run_id}/answer", view.answer, methods=["POST"]),
        Route("/api/runs/{run_id}/cancel", view.cancel, methods=["POST"]),
        Route("/api/runs/{run_id}/redrive", view.redrive, methods=["POST"]),
        Route("/api/runs/{run_id}/fork", view.fork, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Guard(Starlette(routes=routes), access)


Handler = Callable[[Request], Awaitable[Response]]


class _View:
    def __init__(self, project: Project, options: UiOptions, shell: str, csrf: str) -> None:
        self.project = project
        self.options = options
        self.shell = shell
        self.csrf = csrf

    # -- pages --------------------------------------------------------------------------
    def page(self, name: str) -> Handler:
        # Nothing from the request or the store goes into the shell: the script reads the run
        # id from the address and everything else from the API.
        text = (self.shell.replace("{{page}}", html.escape(name))
                .replace("{{csrf}}", html.escape(self.csrf))
                .replace("{{read_only}}", "true" if self.options.read_only else "false"))

        async def serve(_request: Request) -> Response:
            return HTMLResponse(text)

        return serve

    # -- reads --------------------------------------------------------------------------
    async def runs(self, request: Request) -> Response:
        q = request.query_params
        return await self._answer(lambda: self.project.find_runs(
            deployment=q.get("deployment") or None, status=q.get("status") or None,
            outcome=q.get("outcome") or None, since=q.get("since") or None, until=q.get("until") or None,
            offset=_int(q.get("offset"), "offset", 0), limit=_int(q.get("limit"), "limit", 50)).to_dict())

    async def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]

        def read() -> dict[str, Any]:
            run = self.project.get_run(run_id)
            found = run.to_dict()
            found.update(steps=run.steps, created_at=run.created_at, updated_at=run.updated_at,
                         orphaned=run.orphaned, read_only=self.options.read_only)
            for key in ("input", "output", "state"):  # a huge value waits until it is asked for
                found[key] = fold(found.get(key), f"/{key}", RUN_FOLD_BYTES)
            if run.interrupt is not None:  # what the answer form is built from
                found["interrupt"] = {**found["interrupt"], "outcomes": list(run.interrupt.outcomes),
                                      "resume_schema": run.interrupt.resume_schema}
            return found

        return await self._answer(read)

    async def trace(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        q = request.query_params
        return await self._answer(lambda: self.project.trace_view(
            run_id, from_seq=_int(q.get("from"), "from", 0), limit=max(1, min(_int(q.get("limit"), "limit", 500), 5000))))

    async def graph(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        return await self._answer(lambda: self.project.run_graph(run_id))

    async def value(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        pointer = request.query_params.get("pointer", "")
        return await self._answer(lambda: {"value": self.project.run_value(run_id, pointer)})

    async def logs(self, request: Request) -> Response:
        # The same call as `wfops runs logs RUN [STEP]`: the step attempts' logs and the run's own.
        run_id, step = request.path_params["run_id"], request.query_params.get("step") or None
        return await self._answer(lambda: [log.to_dict() for log in self.project.step_logs(run_id, step)])

    async def overview(self, _request: Request) -> Response:
        return await self._answer(lambda: {**self.project.overview(), "read_only": self.options.read_only,
                                           "store": redact(str(self.project.db_path))})

    async def check(self, _request: Request) -> Response:
        def read() -> dict[str, Any]:
            report = self.project.check()
            return {"ok": report.ok, "diagnostics": [d.to_dict() for d in report.diagnostics]}

        return await self._answer(read)

    async def capabilities(self, _request: Request) -> Response:
        def read() -> dict[str, Any]:
            found = self.project.capabilities()
            return {"capabilities": [c.to_dict() for c in found.capabilities], "notes": found.notes,
                    "diagnostics": [d.to_dict() for d in found.diagnostics]}

        return await self._answer(read)

    # -- actions ------------------------------------------------------------------------
    async def answer(self, request: Request) -> Response:
        run_id, body = request.path_params["run_id"], await self._body(request)
        outcome = body.get("outcome")
        if not isinstance(outcome, str):
            return _error(InvalidArgument("answer: name the outcome", argument="outcome"))
        return await self._act(lambda: self.project.resume(run_id, outcome, body.get("payload")).to_dict())

    async def cancel(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        return await self._act(lambda: self.project.cancel(run_id).to_dict())

    async def redrive(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        return await self._act(lambda: self.project.resume(run_id).to_dict())

    async def fork(self, request: Request) -> Response:
        run_id, body = request.path_params["run_id"], await self._body(request)
        step, given = body.get("from_step"), body.get("input") or {}
        if not isinstance(step, str) or not isinstance(given, dict):
            return _error(InvalidArgument("fork: give from_step (a step id) and input (an object)",
                                          argument="from_step"))
        return await self._act(lambda: self.project.fork(run_id, step, given).to_dict())

    # -- plumbing -----------------------------------------------------------------------
    async def _body(self, request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            body = None
        return body if isinstance(body, dict) else {}

    async def _act(self, work: Callable[[], Any]) -> Response:
        if self.options.read_only:
            return _error(UsageError("this server is read-only (wfops ui --read-only)"), status=403)
        return await self._answer(work)

    async def _answer(self, work: Callable[[], Any]) -> Response:
        try:
            found = await in_daemon_thread(work, "wfops-ui")
        except WfopsError as exc:
            return _error(exc)
        except Exception as exc:  # noqa: BLE001 - a bug: one line and a crash log, as the CLI does
            report_crash(exc)
            return JSONResponse({"error": f"internal error: {type(exc).__name__} (a bug in wfops; the server's "
                                          "output names its crash log)", "hint": None}, status_code=500)
        return JSONResponse(masked(found))


def _int(text: str | None, name: str, default: int) -> int:
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise InvalidArgument(f"{name} must be a whole number", argument=name) from None


def _error(exc: WfopsError, status: int | None = None) -> Response:
    """The error as the CLI words it (secrets and URL passwords masked)."""
    if status is None:
        status = 404 if isinstance(exc, UnknownRunError) else 409 if isinstance(exc, RunBusyError) else 400
    return JSONResponse({"error": mask(redact(exc.message)), "hint": mask(redact(exc.hint)) if exc.hint else None,
                         "run_id": exc.run_id}, status_code=status)
