"""The web app in this process, through its ASGI interface (no socket, no browser): the guard
(loopback, token, CSRF, CSP), the JSON each page reads and the actions, on a real SQLite
store of real runs."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.harness import run_cli
from tests.ui import project as ui_project
from wfops.api import Project
from wfops.errors import UsageError
from wfops.ui.app import UiOptions, build_app
from wfops.ui.guard import CSP, TOKEN_VARIABLE, Access

LOCAL = {"host": "127.0.0.1:8765"}
SECRET = "hunter2-correct-horse-battery"


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


def call(app: Any, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes = b"") -> Answer:
    """One HTTP request through the app's ASGI interface, as uvicorn would make it."""
    target, _, query = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": target, "raw_path": target.encode(), "query_string": query.encode(),
             "root_path": "", "server": ("127.0.0.1", 8765), "client": ("127.0.0.1", 50000),
             "headers": [(k.lower().encode(), v.encode()) for k, v in {**LOCAL, **(headers or {})}.items()]}
    sent: list[dict[str, Any]] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return Answer(start["status"], {k.decode(): v.decode() for k, v in start["headers"]},
                  b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = ui_project.make(tmp_path_factory.mktemp("ui") / "proj")
    for args in (["echo.local", "-i", "text=<b>bold</b>", "-i", "blob=" + "y" * 4000], ["boom.local"],
                 ["approve.local"], ["approve.local"]):
        assert run_cli("run", *args, cwd=found).code in (0, 1, 3)
    return found


def app_for(root: Path, *, read_only: bool = False, access: Access | None = None) -> Any:
    return build_app(Project(root), access or Access("127.0.0.1", None), UiOptions(read_only=read_only))


def post(app: Any, path: str, data: Any, csrf: str) -> Answer:
    return call(app, "POST", path, body=json.dumps(data).encode(),
                headers={"content-type": "application/json", "x-csrf-token": csrf})


def test_a_host_other_than_loopback_needs_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    with pytest.raises(UsageError, match="refusing to serve on 0.0.0.0") as refused:
        Access.for_host("0.0.0.0")
    assert TOKEN_VARIABLE in (refused.value.hint or "")
    assert Access.for_host("127.0.0.1").token is None and Access.for_host("::1").token is None
    monkeypatch.setenv(TOKEN_VARIABLE, "s3cret")
    assert Access.for_host("0.0.0.0").token == "s3cret"


def test_every_answer_is_guarded(root: Path) -> None:
    app = app_for(root)
    page = call(app, "GET", "/")
    assert page.status == 200 and page.headers["content-security-policy"] == CSP
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
    assert page.headers["x-frame-options"] == "DENY"
    # A name that resolves to loopback but is not it (DNS rebinding) reads nothing.
    assert call(app, "GET", "/api/runs", headers={"host": "evil.example:8765"}).status == 421
    # An action without the page's CSRF token, or not as JSON, is refused before it runs.
    assert call(app, "POST", "/api/runs/x/cancel").status == 403
    csrf = app.access.csrf
    assert call(app, "POST", "/api/runs/x/cancel", headers={"x-csrf-token": csrf}).status == 415
    assert call(app, "PUT", "/api/runs/x/cancel", headers={"x-csrf-token": csrf}).status == 405
    assert "content-security-policy" in call(app, "POST", "/api/runs/x/cancel").headers


def test_a_token_is_required_from_every_request(root: Path) -> None:
    app = app_for(root, access=Access("0.0.0.0", "s3cret"))
    remote = {"host": "10.0.0.5:8765"}
    assert call(app, "GET", "/api/runs", headers=remote).status == 401
    assert call(app, "GET", "/api/runs", headers={**remote, "authorization": "Bearer wrong"}).status == 401
    assert call(app, "GET", "/api/runs", headers={**remote, "authorization": "Bearer s3cret"}).status == 200
    given = call(app, "GET", "/runs/abc?token=s3cret", headers=remote)
    assert given.status == 303 and given.headers["location"] == "/runs/abc"
    assert "wfops_ui_token=s3cret" in given.headers["set-cookie"] and "HttpOnly" in given.headers["set-cookie"]
    assert call(app, "GET", "/runs/abc", headers={**remote, "cookie": "wfops_ui_token=s3cret"}).status == 200


def test_the_shell_holds_no_data(root: Path) -> None:
    app = app_for(root)
    shell = call(app, "GET", "/runs/%3Cscript%3Ealert(1)%3C%2Fscript%3E").body.decode()
    assert "<script>alert" not in shell and 'data-page="run"' in shell
    assert call(app, "GET", "/static/app.js").status == 200


def test_the_history_reads_pages_filters_and_counts(root: Path) -> None:
    app = app_for(root)
    page = call(app, "GET", "/api/runs").json()
    assert page["total"] == 4 and page["counts"] == {"completed": 1, "failed": 1, "interrupted": 2}
    assert [r["deployment"] for r in page["runs"]] == ["approve.local", "approve.local", "boom.local", "echo.local"]
    assert call(app, "GET", "/api/runs?status=failed").json()["runs"][0]["error"] == "kaboom"
    second = call(app, "GET", "/api/runs?limit=1&offset=1").json()
    assert len(second["runs"]) == 1 and second["total"] == 4
    assert call(app, "GET", "/api/runs?deployment=echo.local&since=2999-01-01T00:00:00Z").json()["total"] == 0
    bad = call(app, "GET", "/api/runs?since=yesterday")
    assert bad.status == 400 and bad.json()["error"] == "since 'yesterday' is not an ISO 8601 time"
    assert call(app, "GET", "/api/runs?limit=x").json()["error"] == "limit must be a whole number"
    assert call(app, "GET", "/api/runs?status=lost").status == 400


def test_a_run_reads_whole_with_its_graph_and_a_folded_trace(root: Path) -> None:
    app = app_for(root)
    echo = call(app, "GET", "/api/runs?deployment=echo.local").json()["runs"][0]["run_id"]
    run = call(app, "GET", f"/api/runs/{echo}").json()
    assert run["output"]["said"]["value"]["text"] == "<b>bold</b>" and run["read_only"] is False
    graph = call(app, "GET", f"/api/runs/{echo}/graph").json()
    assert graph["taken"] == ["say", "end"] and graph["current"] is None
    entry = call(app, "GET", f"/api/runs/{echo}/trace").json()[0]
    folded = entry["output"]
    assert folded["$folded"] == "/trace/1/output" and folded["bytes"] > 4000 and len(folded["preview"]) == 160
    whole = call(app, "GET", f"/api/runs/{echo}/value?pointer=/trace/1/output").json()["value"]
    assert whole["value"]["blob"] == "y" * 4000
    missing = call(app, "GET", "/api/runs/nope")
    assert missing.status == 404 and "nope" in missing.json()["error"]


def test_actions_go_through_the_core_api(root: Path) -> None:
    app = app_for(root)
    csrf = app.access.csrf
    waiting = [r["run_id"] for r in call(app, "GET", "/api/runs?status=interrupted").json()["runs"]]
    run = call(app, "GET", f"/api/runs/{waiting[0]}").json()
    assert run["interrupt"]["outcomes"] == ["approved", "rejected"]
    assert run["interrupt"]["resume_schema"]["required"] == ["by"]
    refused = post(app, f"/api/runs/{waiting[0]}/answer", {"outcome": "maybe", "payload": {"by": "x"}}, csrf)
    assert refused.status == 400
    assert refused.json()["error"] == "outcome 'maybe' is not one the interrupt at ask accepts; use one of approved, rejected"
    done = post(app, f"/api/runs/{waiting[0]}/answer", {"outcome": "approved", "payload": {"by": "ana"}}, csrf)
    assert done.status == 200 and done.json()["status"] == "completed"
    assert post(app, f"/api/runs/{waiting[1]}/cancel", {}, csrf).json()["status"] == "cancelled"
    assert Project(root).get_run(waiting[1]).status == "cancelled"
    failed = call(app, "GET", "/api/runs?status=failed").json()["runs"][0]["run_id"]
    forked = post(app, f"/api/runs/{failed}/fork", {"from_step": "explode", "input": {"message": "again"}}, csrf).json()
    assert forked["forked_from"] == {"run_id": failed, "step": "explode"} and forked["error"]["message"] == "again"
    assert post(app, f"/api/runs/{failed}/redrive", {}, csrf).json()["status"] == "failed"
    assert post(app, f"/api/runs/{failed}/fork", {"input": {}}, csrf).status == 400
    assert post(app, f"/api/runs/{failed}/answer", {"payload": {}}, csrf).status == 400
    read_only = app_for(root, read_only=True)
    refused = post(read_only, f"/api/runs/{failed}/redrive", {}, read_only.access.csrf)
    assert refused.status == 403 and "read-only" in refused.json()["error"]


def test_the_project_reads_its_workflows_deployments_lock_and_catalog(root: Path) -> None:
    app = app_for(root)
    project = call(app, "GET", "/api/project").json()
    assert [w["name"] for w in project["workflows"]] == ["approve", "boom", "echo", "lanes", "secretive", "slow",
                                                        "talk"]
    assert [d["workflow"] for d in project["deployments"]] == ["approve", "boom", "echo", "lanes", "secretive", "slow",
                                                               "talk"]
    assert project["deployments"][0]["executor"] == "local"
    echo = next(d for d in project["deployments"] if d["name"] == "echo.local")
    [nightly] = echo["schedule"]
    assert (nightly["entry"], nightly["cron"], nightly["timezone"]) == ("nightly", "30 2 * * *", "Europe/Berlin")
    assert len(nightly["next"]) == 3 and all(t["utc"].endswith("T01:30:00Z") for t in nightly["next"])
    assert all(d["schedule"] == [] for d in project["deployments"] if d["name"] != "echo.local")
    assert call(app, "GET", "/api/project/check").json() == {"ok": True, "diagnostics": []}
    refs = [c["ref"] for c in call(app, "GET", "/api/project/capabilities").json()["capabilities"]]
    assert "std.echo" in refs and "std.sleep" in refs


def test_wfops_ui_refuses_a_host_without_a_token_and_a_port_in_use(root: Path) -> None:
    refused = run_cli("ui", "--host", "0.0.0.0", cwd=root, env={TOKEN_VARIABLE: None})
    assert refused.code == 2
    assert refused.stderr.splitlines()[0] == ("wfops: error: refusing to serve on 0.0.0.0: a host other than "
                                              "loopback needs a token")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        busy = run_cli("ui", "--port", str(port), cwd=root)
    assert busy.code == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr
    assert busy.stdout == ""  # the address line is printed only once it listens


def test_secrets_show_masked(root: Path) -> None:
    secret = SECRET
    assert run_cli("run", "secretive.local", cwd=root, env={"UI_TEST_TOKEN": secret}).code == 0
    app = app_for(root)
    rid = call(app, "GET", "/api/runs?deployment=secretive.local").json()["runs"][0]["run_id"]
    bodies = [call(app, "GET", f"/api/runs/{rid}{tail}").body.decode() for tail in ("", "/trace", "/graph")]
    assert all(secret not in body for body in bodies)
    assert json.loads(bodies[0])["output"] == {"said": {"value": {"token": "***"}}}


def test_a_huge_run_value_is_folded_until_asked_for(root: Path) -> None:
    assert run_cli("run", "echo.local", "-i", "blob=" + "z" * 40_000, cwd=root).code == 0
    app = app_for(root)
    rid = call(app, "GET", "/api/runs?deployment=echo.local").json()["runs"][0]["run_id"]
    run = call(app, "GET", f"/api/runs/{rid}").json()
    assert run["output"]["$folded"] == "/output" and run["input"]["$folded"] == "/input"
    assert run["state"]["$folded"] == "/state"
    whole = call(app, "GET", f"/api/runs/{rid}/value?pointer=/output").json()["value"]
    assert whole["said"]["value"]["blob"] == "z" * 40_000


def test_a_runs_step_logs_read_as_runs_logs_does_masked_and_marked_when_cut(root: Path) -> None:
    for args, code in ((["talk.local"], 0), (["talk.local", "-i", "n=-1"], 1)):
        assert run_cli("run", *args, cwd=root, env={"UI_TEST_TOKEN": SECRET}).code == code
    app = app_for(root)
    failed, done = call(app, "GET", "/api/runs?deployment=talk.local").json()["runs"][:2]
    answer = call(app, "GET", f"/api/runs/{done['run_id']}/logs")
    assert answer.status == 200 and SECRET not in answer.body.decode()
    # The same JSON as `wfops runs logs RUN --json`, markup and all: the page sets it as text.
    assert answer.json() == run_cli("runs", "logs", done["run_id"], "--json", cwd=root).json() == [
        {"seq": 1, "step": "speak", "attempt": 1, "cut": 0,
         "text": "printed <script>window.__pwned = 3</script> token=***\nline 0\nline 1\nWARNING talk: said 2 lines\n"}]
    [log] = call(app, "GET", f"/api/runs/{failed['run_id']}/logs?step=speak").json()
    assert "Traceback (most recent call last)" in log["text"] and log["text"].rstrip().endswith("ValueError: refused -1")
    assert call(app, "GET", f"/api/runs/{failed['run_id']}/logs?step=nosuch").json() == []
    assert call(app, "GET", "/api/runs/nosuch/logs").status == 404


def test_a_log_cut_by_the_bound_says_so(root: Path) -> None:
    assert run_cli("run", "talk.local", "-i", "n=20000", cwd=root, env={"UI_TEST_TOKEN": SECRET}).code == 0
    [log] = call(app_for(root), "GET", "/api/runs/last/logs").json()
    assert log["cut"] > 0 and f"[... {log['cut']} characters cut ...]" in log["text"]
    assert log["text"].endswith("line 19999\nWARNING talk: said 20000 lines\n")
