"""A local catalog API for the `catalog-lookup` example (stdlib only).

    CATALOG_TOKEN=demo-token python examples/catalog/server.py    # serves http://127.0.0.1:8765/v1

It answers `GET /v1/products/{sku}` as examples/catalog/catalog.openapi.yaml says, and only
to requests carrying `Authorization: Bearer $CATALOG_TOKEN`.
"""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PRODUCTS = {"LAMP-7": {"sku": "LAMP-7", "name": "Desk lamp", "price": 24.0, "stock": 12},
            "CHAIR-2": {"sku": "CHAIR-2", "name": "Chair", "price": 89.5, "stock": None}}
RATES = {"EUR": 1.0, "USD": 1.08}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass  # quiet: the example's terminal shows wfops' progress

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        url = urlsplit(self.path)
        if self.headers.get("Authorization") != f"Bearer {os.environ['CATALOG_TOKEN']}":
            return self.answer(401, {"error": "unauthorized"})
        sku = url.path.removeprefix("/v1/products/")
        product = PRODUCTS.get(sku) if url.path.startswith("/v1/products/") else None
        if product is None:
            return self.answer(404, {"error": f"no product {sku}"})
        currency = parse_qs(url.query).get("currency", ["EUR"])[0]
        return self.answer(200, {**product, "price": round(product["price"] * RATES.get(currency, 1.0), 2),
                                 "currency": currency})

    def answer(self, status: int, body: dict[str, object]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("CATALOG_PORT", "8765"))), Handler).serve_forever()
