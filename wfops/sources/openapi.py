"""HTTP APIs as wfops sources (`kind: openapi`, docs/sources.md): every operation of an OpenAPI
document is a capability, called at `base_url` and nowhere else.

The request is built from the path template alone (each path value percent-encoded into its
one segment), query and header parameters by name and the JSON `body`; the source's headers
(tokens, by `${NAME}`) are added, and an operation that declares an `Idempotency-Key` header gets
the step's idempotency key, the same across retries and a resume. A redirect is followed only
while it stays under `base_url`; bodies both ways are bounded by `max_body_bytes`. A 2xx
answer is the output; a declared non-2xx status is its outcome (404 `not_found`), its body the
output; a 429 or 503 with `Retry-After` is sent again after the wait the server asks for (up to
`RETRY_AFTER_MAX` seconds, `RETRY_AFTER_TRIES` times); anything else fails the step.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import email.utils
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx2

from wfops.errors import CapabilityError, StepTimeout, UsageError, WfopsError
from wfops.jsonvalues import parse_json
from wfops.redact import mask, masked
from wfops.schemacheck import first_error
from wfops.sources.base import CallResult, Capability, SourceKind, StepContext
from wfops.sources.envrefs import expand_all
from wfops.sources.http import origin, same_host_client
from wfops.sources.modules import note_consulted
from wfops.sources.openapi_doc import Operation, Response, SpecDocument, parse_spec, read_spec

if TYPE_CHECKING:
    from wfops.model.objects import OpenapiSource

RETRY_AFTER_MAX = 60.0
RETRY_AFTER_TRIES = 3
MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}


class HttpApiSource:
    """A `Source` backed by an HTTP API and its OpenAPI document."""

    def __init__(self, source_id: str, spec: OpenapiSource, root: Path) -> None:
        self.id = source_id
        self.kind: SourceKind = "openapi"
        self.spec = spec
        self.root = Path(root).resolve()
        self._base = httpx2.URL(spec.base_url.rstrip("/") + "/")
        if spec.spec.startswith(("http://", "https://")):
            self.document: SpecDocument = parse_spec(self._fetch_spec(), spec.spec, spec.operations)
        else:
            # A result cached from this validation (the validate replay) depends on the document
            # as on an imported module: an edit of it must miss.
            note_consulted(self.root, [Path(spec.spec).as_posix()])
            self.document = read_spec(self.root, spec.spec, spec.operations)
        pins = {f"sha256:{spec.spec}": self.document.sha256}
        self._capabilities = {name: Capability(source_id, name, op.input_schema, op.output_schema, op.outcomes,
                                               op.description, pins=pins)
                              for name, op in sorted(self.document.operations.items())}
        self._client: httpx2.AsyncClient | None = None

    def _fetch_spec(self) -> bytes:
        """The document at the `spec:` URL, bounded by `max_body_bytes`; no redirect is followed.
        The source's headers go with it only when it is on `base_url`'s host."""
        url = self.spec.spec
        headers: dict[str, str] = {}
        if origin(url) == origin(self._base):
            # A token not set here (a machine that only validates) leaves the document unauthenticated.
            with contextlib.suppress(CapabilityError):
                headers = expand_all(f"openapi source {self.id!r}", "headers", self.spec.headers)
        limit = self.spec.max_body_bytes
        try:
            with httpx2.Client(headers={**headers, "accept-encoding": "identity"}, follow_redirects=False,
                               trust_env=False, timeout=self.spec.timeout) as client, \
                    client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise WfopsError(f"fetching the OpenAPI document {url} answered {response.status_code} "
                                     f"{response.reason_phrase}", hint="check `spec:`; a redirect is not followed")
                body = bytearray()
                for chunk in response.iter_raw():
                    body.extend(chunk)
                    if len(body) > limit:
                        raise WfopsError(f"the OpenAPI document {url} is over the limit of {limit:,} bytes "
                                         "(the source's `max_body_bytes:`)")
        except httpx2.HTTPError as exc:
            raise WfopsError(mask(f"cannot fetch the OpenAPI document {url}: {type(exc).__name__}: {exc}"),
                             hint="check the address, or keep a copy of the document in the repository") from None
        return bytes(body)

    async def open(self) -> None:
        return None  # the client is made on the first call, in the loop that makes it

    def capabilities(self) -> Mapping[str, Capability]:
        return self._capabilities

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def call_here(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        """The same call from a thread without an event loop (a Dask worker's task thread), with
        an HTTP client of its own: a worker runs several tasks at once, each in its own loop."""
        own = copy.copy(self)
        own._client = None

        async def once() -> CallResult:
            try:
                return await own.call(name, payload, context)
            finally:
                await own.close()
        return asyncio.run(once())

    async def call(self, name: str, payload: dict[str, Any], context: StepContext) -> CallResult:
        op = self.document.operations.get(name)
        if op is None:
            raise CapabilityError(f"openapi source {self.id!r} has no operation {name!r}")
        ref = f"{self.id}.{name}"
        problem = first_error(op.input_schema, payload)
        if problem is not None:
            raise CapabilityError(f"{ref} input does not match its input schema: {problem}")
        request = self._request(ref, op, payload, context)
        response, body = await self._send(ref, request)
        if 200 <= response.status_code < 300:
            return CallResult("ok", masked(self._output(ref, op.success, response, body)))
        declared = op.errors.get(response.status_code)
        if declared is not None:
            output = self._output(ref, declared, response, body) if (declared.json or body) else None
            return CallResult(declared.outcome, masked(output))
        raise CapabilityError(mask(f"{ref}: {op.method.upper()} {op.path} answered {response.status_code} "
                                   f"{response.reason_phrase}{_excerpt(body)}"),
                              hint="the operation does not declare this status; add it to the document's "
                              "`responses` to route it as an outcome")

    # -- requests ------------------------------------------------------------------------

    def _request(self, ref: str, op: Operation, payload: dict[str, Any], context: StepContext) -> httpx2.Request:
        path = op.path
        query: list[tuple[str, str | int | float | bool | None]] = []
        # identity: a compressed body would be bounded before it is inflated, not after.
        headers = {"accept": "application/json", "accept-encoding": "identity", **expand_all(f"openapi source {self.id!r}", "headers",
                                                             self.spec.headers)}
        for param in op.params:
            if param.name not in payload:
                continue
            value = payload[param.name]
            if param.where == "path":
                path = path.replace("{" + param.name + "}", _segment(value))
            elif param.where == "query":
                query += [(param.name, _text(item)) for item in (value if isinstance(value, list) else [value])]
            else:
                headers[param.name] = _text(value)
        if op.idempotency_header is not None:
            headers[op.idempotency_header] = context.idempotency_key
        content: bytes | None = None
        if op.body and "body" in payload:
            content = json.dumps(payload["body"], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            if len(content) > self.spec.max_body_bytes:
                raise CapabilityError(f"{ref}: the request body is {len(content):,} bytes, over the limit of "
                                      f"{self.spec.max_body_bytes:,} (the source's `max_body_bytes:`)")
            headers["content-type"] = "application/json"
        url = self._base.join(path.lstrip("/"))
        if not _under(url, self._base):
            raise CapabilityError(f"{ref}: the request would leave {self.spec.base_url}",
                                  hint="path values are one segment each; check the input")
        return httpx2.Request(op.method.upper(), url, params=query, headers=headers, content=content)

    async def _send(self, ref: str, request: httpx2.Request) -> tuple[httpx2.Response, bytes]:
        if self._client is None:
            self._client = same_host_client(str(self._base), {}, timeout=self.spec.timeout)
        for attempt in range(1, RETRY_AFTER_TRIES + 2):
            for _ in range(MAX_REDIRECTS + 1):
                response, body = await self._exchange(ref, request)
                location = response.headers.get("location")
                if response.status_code not in _REDIRECTS or location is None:
                    break
                request = self._redirected(ref, request, response, location)
            else:
                raise CapabilityError(f"{ref}: more than {MAX_REDIRECTS} redirects")
            wait = _retry_after(response)
            if wait is None or attempt > RETRY_AFTER_TRIES:
                return response, body
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _exchange(self, ref: str, request: httpx2.Request) -> tuple[httpx2.Response, bytes]:
        assert self._client is not None
        limit = self.spec.max_body_bytes
        try:
            response = await self._client.send(request, stream=True)
            try:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise _too_large(ref, limit, int(declared))
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body.extend(chunk)
                    if len(body) > limit:
                        raise _too_large(ref, limit, None)
            finally:
                await response.aclose()
        except httpx2.TimeoutException:
            raise StepTimeout(f"{ref}: {request.method} {request.url.path} did not answer within "
                              f"{self.spec.timeout:g}s (the source's `timeout:`)") from None
        except httpx2.HTTPError as exc:
            raise CapabilityError(mask(f"{ref}: {request.method} {request.url.path} failed: "
                                       f"{type(exc).__name__}: {exc}"),
                                  hint=f"check the API is reachable at {self.spec.base_url}") from None
        return response, bytes(body)

    def _redirected(self, ref: str, request: httpx2.Request, response: httpx2.Response,
                    location: str) -> httpx2.Request:
        target = request.url.join(location)
        if origin(target) != origin(self._base) or not _under(target, self._base):
            raise CapabilityError(mask(f"{ref}: {request.method} {request.url.path} was redirected to "
                                       f"{target.scheme}://{target.host}{target.path}, outside "
                                       f"{self.spec.base_url}: refused"),
                                  hint="requests (and their headers) go only to `base_url`; point it at the "
                                  "final address")
        method = request.method
        content: bytes | None = request.content or None
        headers = dict(request.headers)
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, content = "GET", None
            headers.pop("content-type", None)
        headers.pop("content-length", None)
        return httpx2.Request(method, target, headers=headers, content=content)

    # -- responses -----------------------------------------------------------------------

    def _output(self, ref: str, declared: Response, response: httpx2.Response, body: bytes) -> dict[str, Any] | None:
        text = body.decode("utf-8", "replace")
        if not declared.json:
            if response.headers.get("content-type", "").startswith("text/") or text:
                return {"text": text} if text or response.status_code != 204 else {}
            return {}
        if not text.strip():
            return {}
        try:
            value = parse_json(text, f"{ref} response body")
        except UsageError as exc:
            raise CapabilityError(mask(exc.message + _excerpt(body))) from None
        return {"body": value} if declared.wrapped else value


def _under(url: httpx2.URL, base: httpx2.URL) -> bool:
    return origin(url) == origin(base) and url.raw_path.split(b"?", 1)[0].startswith(base.raw_path)


def _segment(value: Any) -> str:
    """A path value as one segment: every reserved character encoded (`/`, `?`, `#`), and a value
    that is all dots (`..`) too, so it names a segment rather than climbing out of one."""
    text = quote(_text(value), safe="")
    return text.replace(".", "%2E") if text.strip(".") == "" else text


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _retry_after(response: httpx2.Response) -> float | None:
    """Seconds to wait before sending again, for a 429 or 503 that asks for it (None: do not)."""
    if response.status_code not in (429, 503):
        return None
    value = response.headers.get("retry-after", "").strip()
    if value.isdigit():
        wait = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        wait = max(0.0, when.timestamp() - time.time())
    return wait if wait <= RETRY_AFTER_MAX else None


def _too_large(ref: str, limit: int, size: int | None) -> CapabilityError:
    said = f" ({size:,} bytes)" if size is not None else ""
    return CapabilityError(f"{ref}: the response body{said} is over the limit of {limit:,} bytes (the source's "
                           "`max_body_bytes:`)", hint="ask the API for less (a page, a filter), or raise the limit")


def _excerpt(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    return f": {text[:200]}" if text else ""
