"""An HTTP service written for the tests, on 127.0.0.1, with its OpenAPI 3.0 and 3.1 documents.

It requires `Authorization: Bearer <TOKEN>` and records every request it gets (method, path,
query, headers, body), so a test can see what wfops sent and where.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "shop-token-5f2a9c7e1d"
ITEMS = {"7": {"id": "7", "name": "lamp", "price": 12.5, "note": None}}


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case
    body: Any


@dataclass
class Service:
    port: int
    seen: list[Seen] = field(default_factory=list)
    flaky: int = 1  # how many 503s /flaky answers before it succeeds
    other_host: str = "http://localhost:9/elsewhere"
    document: str = ""  # served at /v1/openapi.yaml, to anyone

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _handler(service: Service) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
            raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _handle(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            service.seen.append(Seen(self.command, url.path, parse_qs(url.query), {k.lower(): v for k, v in self.headers.items()}, body))
            if url.path == "/v1/openapi.yaml":
                return self._answer(200, service.document.encode())
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._answer(401, {"error": "unauthorized"})
            parts = url.path.split("/")
            if url.path.startswith("/v1/items/") and self.command == "GET":
                item = ITEMS.get(parts[3])
                if item is None:
                    # A careless service quotes the credentials it got: wfops must mask them.
                    return self._answer(404, {"error": f"no item {parts[3]}",
                                              "auth": self.headers.get("Authorization")})
                verbose = parse_qs(url.query).get("verbose") == ["true"]
                return self._answer(200, {**item, "verbose": verbose})
            if url.path == "/v1/items" and self.command == "POST":
                if not isinstance(body, dict) or not body.get("name"):
                    return self._answer(422, {"error": "name is required"})
                return self._answer(201, {"id": "8", "name": body["name"], "price": body.get("price", 1),
                                          "note": None, "key": self.headers.get("Idempotency-Key")})
            if url.path == "/v1/flaky":
                if service.flaky > 0:
                    service.flaky -= 1
                    return self._answer(503, {"error": "busy"}, {"Retry-After": "0"})
                return self._answer(200, {"ok": True})
            if url.path == "/v1/big":
                return self._answer(200, {"blob": "x" * 50_000})
            if url.path == "/v1/away":
                return self._answer(302, None, {"Location": service.other_host})
            if url.path == "/v1/moved":
                return self._answer(307, None, {"Location": "/v1/items/7"})
            if url.path == "/v1/teapot":
                return self._answer(418, {"error": "teapot"})
            return self._answer(404, {"error": "no route"})

        do_GET = do_POST = do_PUT = do_DELETE = _handle

    return Handler


@contextmanager
def serving() -> Iterator[Service]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Service(0)))
    service = Service(server.server_address[1])
    server.RequestHandlerClass = _handler(service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()


_ITEM_30 = """
      type: object
      required: [id, name, price]
      properties:
        id: {type: string}
        name: {type: string}
        price: {type: number, minimum: 0, exclusiveMinimum: true}
        note: {type: string, nullable: true}
        verbose: {type: boolean}
        key: {type: string, nullable: true}
"""
_ITEM_31 = """
      type: object
      required: [id, name, price]
      properties:
        id: {type: string}
        name: {type: string}
        price: {type: number, exclusiveMinimum: 0}
        note: {type: [string, "null"]}
        verbose: {type: boolean}
        key: {type: [string, "null"]}
"""

_PATHS = """
paths:
  /items/{item_id}:
    get:
      operationId: getItem
      summary: One item by id.
      parameters:
        - {name: item_id, in: path, required: true, schema: {type: string}}
        - {name: verbose, in: query, schema: {type: boolean}}
      responses:
        "200":
          description: the item
          content: {application/json: {schema: {$ref: "#/components/schemas/Item"}}}
        "404":
          description: no such item
          content: {application/json: {schema: {$ref: "#/components/schemas/Problem"}}}
  /items:
    post:
      operationId: createItem
      parameters:
        - {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string}, price: {type: number}}}
      responses:
        "201":
          description: created
          content: {application/json: {schema: {$ref: "#/components/schemas/Item"}}}
        "422":
          description: invalid
          content: {application/json: {schema: {$ref: "#/components/schemas/Problem"}}}
  /flaky:
    get:
      operationId: flaky
      responses:
        "200": {description: fine, content: {application/json: {schema: {type: object, properties: {ok: {type: boolean}}}}}}
  /big:
    get:
      operationId: big
      responses:
        "200": {description: large, content: {application/json: {schema: {type: object}}}}
  /away:
    get:
      operationId: away
      responses:
        "200": {description: never, content: {application/json: {schema: {type: object}}}}
  /moved:
    get:
      operationId: moved
      responses:
        "200":
          description: the item, after a redirect on the same host
          content: {application/json: {schema: {$ref: "#/components/schemas/Item"}}}
  /teapot:
    get:
      operationId: teapot
      responses:
        "200": {description: never, content: {application/json: {schema: {type: object}}}}
"""

_COMPONENTS = """
components:
  schemas:
    Problem:
      type: object
      required: [error]
      properties:
        error: {type: string}
    Item:
"""


def document(version: str) -> str:
    """The service's OpenAPI document, "3.0" or "3.1"."""
    head = f"openapi: {version}.3\ninfo: {{title: shop, version: '1'}}\n" if version == "3.0" else \
        f"openapi: {version}.0\ninfo: {{title: shop, version: '1'}}\n"
    return head + _PATHS + _COMPONENTS + (_ITEM_30 if version == "3.0" else _ITEM_31)
