"""`kind: openapi` sources: a workflow calls an HTTP service written for the tests (on
127.0.0.1) through its OpenAPI 3.0 and 3.1 documents."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import run_cli
from tests.runner.hostile import assert_no_secret
from tests.sources.apiserver import TOKEN, Service, document, serving
from wfops.api import Project
from wfops.errors import CallFailed, CapabilityError
from wfops.sources.http import same_host_client
from wfops.sources.openapi_doc import reason

WORKFLOW = """\
name: item
version: 1
input: {type: object, required: [id], properties: {id: {type: string}}}
state:
  name: {type: string}
  problem: {type: string}
  created: {type: object}
output: {name: $state.name, problem: $state.problem, created: $state.created}
steps:
  - id: get
    uses: shop.getItem
    with: {item_id: $input.id, verbose: true}
    save: {name: state.name}
    on: {ok: create, not_found: missing}
  - id: missing
    uses: std.echo
    with: {value: gone}
    save: {value: state.problem}
    next: end
  - id: create
    uses: shop.createItem
    with: {body: {name: $state.name, price: 3}}
    save: state.created
    on: {ok: end, unprocessable_content: end}
"""


def sources(service: Service, **extra: str) -> str:
    lines = "".join(f"    {key}: {value}\n" for key, value in extra.items())
    return ("sources:\n  shop:\n    kind: openapi\n    spec: api/shop.openapi.yaml\n"
            f"    base_url: {service.base_url}\n"
            '    headers: {Authorization: "Bearer ${SHOP_TOKEN}"}\n    timeout: 10\n' + lines)


@pytest.fixture
def service() -> Iterator[Service]:
    with serving() as running:
        yield running


@pytest.fixture(params=["3.0", "3.1"])
def project(request: pytest.FixtureRequest, service: Service, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("SHOP_TOKEN", TOKEN)
    root = write(tmp_path / "p", {
        "sources.yaml": sources(service, max_body_bytes="20000"),
        "api/shop.openapi.yaml": document(request.param),
        "workflows/item.yaml": WORKFLOW,
        "deployments/item.local.yaml": "name: item.local\nworkflow: item\ninput: {id: '7'}\n"})
    made = Project(root, db=tmp_path / "runs.db")
    compiled = made.compile()
    assert compiled.ok, compiled.diagnostics
    return made


@pytest.mark.slow  # a real HTTP server on loopback
def test_a_workflow_sends_path_query_and_body_and_routes_a_declared_404(project: Project, service: Service,
                                                                       tmp_path: Path) -> None:
    run = project.run("item.local")
    assert run.status == "completed", run.error
    assert run.output is not None and run.output["name"] == "lamp"
    created = run.output["created"]
    assert created["name"] == "lamp" and created["id"] == "8"
    get, post = service.seen
    assert (get.method, get.path, get.query) == ("GET", "/v1/items/7", {"verbose": ["true"]})
    assert (post.method, post.path, post.body) == ("POST", "/v1/items", {"name": "lamp", "price": 3})
    # The operation declares an Idempotency-Key header: the step's key, stable across retries.
    assert created["key"] == post.headers["idempotency-key"]
    assert created["key"].startswith(f"{run.run_id}:") and "create" in created["key"]
    assert get.headers["authorization"] == f"Bearer {TOKEN}"

    missing = project.run("item.local", {"id": "nope"})
    assert (missing.status, missing.output) == ("completed", {"name": None, "problem": "gone", "created": None})
    [first, _] = project.trace(missing.run_id)
    assert (first.outcome, first.output) == ("not_found", {"error": "no item nope", "auth": "Bearer ***"})

    # The token was sent, and is nowhere in what wfops keeps or shows.
    shown = json.dumps([run.output, missing.output, [e.to_dict() for e in project.trace(run.run_id)]], default=str)
    with sqlite3.connect(tmp_path / "runs.db") as db:
        stored = [json.dumps(row, default=str) for table in ("runs", "trace")
                  for row in db.execute(f"SELECT * FROM {table}")]  # noqa: S608 - fixed names
    assert_no_secret(TOKEN, shown, *stored, (project.root / "wfops.lock").read_text())


@pytest.mark.slow
def test_a_path_value_stays_one_segment(project: Project, service: Service) -> None:
    out = project.call("shop.getItem", {"item_id": "../flaky?x=1"})
    assert out.outcome == "not_found"
    assert service.seen[-1].path == "/v1/items/..%2Fflaky%3Fx%3D1"
    assert project.call("shop.getItem", {"item_id": ".."}).outcome == "not_found"
    assert service.seen[-1].path == "/v1/items/%2E%2E"


@pytest.mark.slow
def test_a_503_with_retry_after_is_sent_again(project: Project, service: Service) -> None:
    service.flaky = 2
    assert project.call("shop.flaky", {}).output == {"ok": True}
    assert [s.path for s in service.seen] == ["/v1/flaky"] * 3


@pytest.mark.slow
def test_a_response_over_the_size_limit_is_refused(project: Project) -> None:
    with pytest.raises(CallFailed) as caught:
        project.call("shop.big", {})
    assert "is over the limit of 20,000 bytes" in caught.value.message


@pytest.mark.slow
def test_a_redirect_to_another_host_is_refused_and_one_on_the_host_followed(project: Project,
                                                                           service: Service) -> None:
    with pytest.raises(CallFailed) as caught:
        project.call("shop.away", {})
    assert "was redirected to http://localhost/elsewhere" in caught.value.message
    assert "refused" in caught.value.message
    moved = project.call("shop.moved", {})
    assert moved.output is not None and moved.output["name"] == "lamp"
    assert [s.path for s in service.seen] == ["/v1/away", "/v1/moved", "/v1/items/7"]
    assert all(s.headers.get("authorization") == f"Bearer {TOKEN}" for s in service.seen)


@pytest.mark.slow
def test_an_undeclared_status_fails_the_step(project: Project) -> None:
    with pytest.raises(CallFailed) as caught:
        project.call("shop.teapot", {})
    assert "answered 418" in caught.value.message and "does not declare this status" in caught.value.hint


@pytest.mark.slow
def test_the_spec_changed_after_compile_is_drift_naming_the_operation_and_field(project: Project) -> None:
    spec = project.root / "api" / "shop.openapi.yaml"
    spec.write_text(spec.read_text().replace("name: {type: string}\n        price", "name: {type: integer}\n"
                                                                                    "        price"))
    found = [d for d in project.check(live=True).diagnostics if d.code == "capability-drift"]
    messages = " ".join(d.message for d in found)
    assert "shop.getItem changed since wfops.lock" in messages, found
    assert "output model `Item` field `name` type string -> integer" in messages
    assert "`api/shop.openapi.yaml` changed (sha256" in messages
    refused = project.check()
    assert not refused.ok


def test_reason_phrases_name_the_outcomes() -> None:
    assert [reason(code) for code in (404, 409, 422, 413, 418, 599)] == [
        "not_found", "conflict", "unprocessable_content", "content_too_large", "i_m_a_teapot", "status_599"]


def test_a_3_0_document_becomes_json_schema(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources:\n  shop: {kind: openapi, spec: s.yaml, base_url: 'http://127.0.0.1:9/v1'}\n",
                            "s.yaml": document("3.0")})
    caps = {c.name: c for c in Project(root).capabilities("shop").capabilities}
    item = caps["getItem"].output_schema["$defs"]["Item"]["properties"]
    assert item["note"] == {"type": ["string", "null"]}
    assert item["price"] == {"type": "number", "exclusiveMinimum": 0}
    assert caps["getItem"].outcomes == ["ok", "not_found"]
    assert caps["createItem"].input_schema["required"] == ["body"]  # Idempotency-Key: filled by wfops
    assert set(caps["getItem"].input_schema["properties"]) == {"item_id", "verbose"}


def test_an_invalid_document_is_a_finding_at_spec(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources:\n  shop:\n    kind: openapi\n    spec: s.yaml\n"
                                            "    base_url: 'http://127.0.0.1:9/v1'\n",
                            "s.yaml": textwrap.dedent("""\
                                openapi: 3.1.0
                                info: {title: x}
                                paths: {}
                                """)})
    [found] = Project(root).validate().diagnostics
    assert (found.code, found.line, found.column) == ("source-spec-error", 4, 11), found
    assert "s.yaml is not a valid OpenAPI document" in found.message and "version" in found.message


def test_a_spec_that_is_neither_a_file_nor_an_http_url_is_refused(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources:\n  shop:\n    kind: openapi\n"
                                            "    spec: ftp://example.com/openapi.json\n"
                                            "    base_url: 'http://127.0.0.1:9/v1'\n"})
    [found] = Project(root).validate().diagnostics
    assert found.code == "invalid-source" and "neither a file of the project nor an http(s) URL" in found.message


@pytest.mark.slow  # a real HTTP server on loopback
def test_a_fetched_document_is_locked_by_its_hash(service: Service, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_TOKEN", TOKEN)
    service.document = document("3.1")
    url = f"{service.base_url}/openapi.yaml"
    root = write(tmp_path, {"sources.yaml": sources(service).replace("api/shop.openapi.yaml", url),
                            "workflows/item.yaml": WORKFLOW})
    made = Project(root, db=tmp_path / "runs.db")
    assert made.compile().ok
    lock = json.loads((root / "wfops.lock").read_text())
    assert set(lock["sources"]["shop"]["capabilities"]["getItem"]["pins"]) == {f"sha256:{url}"}
    assert made.call("shop.getItem", {"item_id": "7"}).output["name"] == "lamp"  # type: ignore[index]
    service.document = document("3.1").replace("  /flaky:", "  /flaky:\n    summary: the same API, other bytes")
    found = [d for d in made.check(live=True).diagnostics if d.code == "capability-drift"]
    assert found and all(f"`{url}` changed (sha256" in d.message for d in found), found


def test_an_edited_document_misses_the_validate_replay(tmp_path: Path) -> None:
    root = write(tmp_path, {"sources.yaml": "sources:\n  shop: {kind: openapi, spec: api/s.yaml, base_url: 'http://127.0.0.1:9/v1'}\n",
                            "api/s.yaml": document("3.1")})
    assert run_cli("validate", cwd=root).code == 0
    assert run_cli("validate", cwd=root).code == 0  # replayed from .wfops/cache
    (root / "api" / "s.yaml").write_text(document("3.1").replace("openapi: 3.1.0", "openapi: 3.1.0\npaths: 1"))
    again = run_cli("validate", cwd=root)
    assert again.code == 1 and "source-spec-error" in again.stdout, again


def test_operations_is_an_allow_list_by_id_or_method_and_path(tmp_path: Path) -> None:
    base = "sources:\n  shop: {kind: openapi, spec: s.yaml, base_url: 'http://127.0.0.1:9/v1', operations: %s}\n"
    root = write(tmp_path, {"sources.yaml": base % "[getItem, 'GET /flaky']", "s.yaml": document("3.0")})
    assert [c.ref for c in Project(root).capabilities("shop").capabilities] == ["shop.flaky", "shop.getItem"]
    write(root, {"sources.yaml": base % "[getitem]"})
    [found] = Project(root).validate().diagnostics
    assert found.code == "source-spec-error" and "`operations` names 'getitem'" in found.message


def test_a_same_host_client_refuses_another_origin_before_sending() -> None:
    async def main() -> str:
        async with same_host_client("http://127.0.0.1:9/v1", {"Authorization": "Bearer x"}, timeout=5) as client:
            with pytest.raises(CapabilityError) as caught:
                await client.get("http://localhost:9/v1")
            return caught.value.message

    assert "refused to send a request to http://localhost" in asyncio.run(main())
