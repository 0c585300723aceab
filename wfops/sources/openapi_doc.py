"""An OpenAPI 3.0 or 3.1 document read into capability contracts (docs/sources.md).

Each operation becomes one capability: its input the path, query and header parameters by
name plus the JSON request body as `body`; its output the JSON body of its success response;
each declared non-2xx status an outcome named by its reason phrase in snake_case. Schemas are
turned into JSON Schema 2020-12 (3.0's `nullable`, boolean `exclusiveMinimum`/`Maximum` and
`example`), and the component schemas they use travel along as `$defs`.
"""

from __future__ import annotations

import hashlib
import http
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wfops.errors import WfopsError
from wfops.loader.yaml import YamlLoadError, load_yaml_bytes

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
#: The header wfops fills with the step's idempotency key when an operation declares it.
IDEMPOTENCY_HEADER = "idempotency-key"
#: RFC 9110's names where Python's table still has the older ones.
_REASONS = {413: "content_too_large", 414: "uri_too_long", 416: "range_not_satisfiable",
            422: "unprocessable_content"}
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
               "unevaluatedItems", "unevaluatedProperties", "additionalItems")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
#: OpenAPI-only keywords JSON Schema does not know (annotations only).
_DROPPED = ("example", "xml", "externalDocs", "discriminator")
_COMPONENT = "#/components/schemas/"
TEXT_OUTPUT: dict[str, Any] = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}


@dataclass(frozen=True)
class Param:
    name: str
    where: str  # path | query | header


@dataclass(frozen=True)
class Response:
    status: int
    outcome: str
    json: bool  # the body is JSON (else text, or nothing)
    wrapped: bool  # a body that is not an object is the output's `body` field


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    path: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    params: tuple[Param, ...]
    body: bool
    idempotency_header: str | None
    success: Response
    errors: Mapping[int, Response] = field(default_factory=dict)

    @property
    def outcomes(self) -> tuple[str, ...]:
        return ("ok", *sorted({r.outcome for r in self.errors.values()}))


@dataclass(frozen=True)
class SpecDocument:
    file: str
    sha256: str
    version: str
    operations: Mapping[str, Operation]


def reason(status: int) -> str:
    """404 `not_found`, 409 `conflict`, 422 `unprocessable_content`."""
    if status in _REASONS:
        return _REASONS[status]
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        return f"status_{status}"
    return re.sub(r"[^a-z0-9]+", "_", phrase.lower()).strip("_")


def read_spec(root: Path, spec: str, allowed: list[str] | None) -> SpecDocument:
    """The document at `spec` (relative to `root`), validated, as its operations; `WfopsError`
    saying what is wrong (unreadable, not OpenAPI 3.0/3.1, invalid, an unknown operation)."""
    path = (root / spec).resolve()
    if not path.is_relative_to(root.resolve()):
        raise WfopsError(f"`spec` {spec!r} is outside the project", hint="keep the document in the repository")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WfopsError(f"cannot read the OpenAPI document {spec}: {exc.strerror or exc}",
                         hint="`spec:` is a file relative to the project root") from None
    return parse_spec(raw, spec, allowed)


def parse_spec(raw: bytes, spec: str, allowed: list[str] | None) -> SpecDocument:
    """The document `raw` (read from `spec`, a file or a URL), validated, as its operations."""
    try:
        data = load_yaml_bytes(raw, spec).data
    except YamlLoadError as exc:
        raise WfopsError(f"{spec} is not a readable OpenAPI document: {exc.diagnostic.message}") from None
    version = str(data.get("openapi", "")) if isinstance(data, dict) else ""
    if not re.match(r"^3\.[01]\.\d+$", version):
        raise WfopsError(f"{spec} is not an OpenAPI 3.0 or 3.1 document (`openapi: {version or '?'}`)",
                         hint="wfops reads OpenAPI 3.0.x and 3.1.x; convert a Swagger 2.0 document first")
    _validate(spec, data)
    operations = dict(_operations(data, version))
    if allowed is not None:
        by_alias = {alias: op.name for op in operations.values()
                    for alias in (op.name, f"{op.method.upper()} {op.path}")}
        unknown = [name for name in allowed if name not in by_alias]
        if unknown:
            raise WfopsError(f"`operations` names {unknown[0]!r}, which {spec} does not declare",
                             hint="give an operationId, or `METHOD /path`: " + ", ".join(sorted(operations)[:8]))
        keep = {by_alias[name] for name in allowed}
        operations = {name: op for name, op in operations.items() if name in keep}
    return SpecDocument(spec, hashlib.sha256(raw).hexdigest(), version, operations)


def _validate(spec: str, data: dict[str, Any]) -> None:
    # deferred: openapi_spec_validator (~270 ms), only for projects with an OpenAPI source
    from openapi_spec_validator import validate

    try:
        validate(data)
    except Exception as exc:  # noqa: BLE001 - the checker's verdict, in one line
        text = str(getattr(exc, "message", None) or exc).splitlines()[0][:300]
        where = "/".join(str(p) for p in getattr(exc, "path", ()) or ())
        raise WfopsError(f"{spec} is not a valid OpenAPI document: {text}" + (f" (at {where})" if where else ""),
                         hint="check it with an OpenAPI validator (e.g. `openapi-spec-validator FILE`)") from None


def _operations(data: dict[str, Any], version: str) -> Iterator[tuple[str, Operation]]:
    components = (data.get("components") or {}).get("schemas") or {}
    convert = _Converter(components, legacy=version.startswith("3.0"))
    seen: set[str] = set()
    for path, item in sorted((data.get("paths") or {}).items()):
        item = _deref(data, item)
        shared = [_deref(data, p) for p in item.get("parameters") or []]
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            name = op.get("operationId") or _derived_name(method, path)
            if name in seen:
                raise WfopsError(f"two operations are both named {name!r}", hint="give each an operationId")
            seen.add(name)
            own = [_deref(data, p) for p in op.get("parameters") or []]
            params = {(p["name"], p["in"]): p for p in [*shared, *own]}
            yield name, _operation(data, convert, name, method, path, op, list(params.values()))


def _operation(data: dict[str, Any], convert: _Converter, name: str, method: str, path: str,
               op: dict[str, Any], params: list[dict[str, Any]]) -> Operation:
    props: dict[str, Any] = {}
    required: list[str] = []
    taken: list[Param] = []
    idempotency: str | None = None
    for param in params:
        where = param["in"]
        if where == "header" and param["name"].lower() == IDEMPOTENCY_HEADER:
            idempotency = param["name"]  # filled by wfops from the step's idempotency key
            continue
        if where not in ("path", "query", "header"):
            continue  # cookies: not sent
        schema = param.get("schema") or _media_schema(param.get("content")) or {}
        props[param["name"]] = {**convert.schema(schema), **({"description": param["description"]}
                                                             if param.get("description") else {})}
        if param.get("required") or where == "path":
            required.append(param["name"])
        taken.append(Param(param["name"], where))
    body = False
    request = _deref(data, op.get("requestBody")) if op.get("requestBody") else None
    if request is not None:
        schema = _media_schema(request.get("content"))
        if schema is not None:
            body = True
            props["body"] = convert.schema(schema)
            if request.get("required"):
                required.append("body")
    input_schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        input_schema["required"] = sorted(set(required))
    success, success_schema, errors, error_schemas = _responses(data, convert, op.get("responses") or {})
    shapes = [success_schema] + [s for s in error_schemas if s not in (success_schema,)]
    output = shapes[0] if len(shapes) == 1 else {"anyOf": _unique(shapes)}
    defs = convert.defs_for(input_schema)
    if defs:
        input_schema["$defs"] = defs
    defs = convert.defs_for(output)
    if defs:
        output = {**output, "$defs": defs}
    description = str(op.get("summary") or op.get("description") or f"{method.upper()} {path}")
    return Operation(name, method, path, description, input_schema, output, tuple(taken), body, idempotency,
                     success, errors)


def _responses(data: dict[str, Any], convert: _Converter, responses: dict[str, Any]
               ) -> tuple[Response, dict[str, Any], dict[int, Response], list[dict[str, Any]]]:
    codes = {str(code).upper(): _deref(data, response) for code, response in responses.items()}
    ok_codes = sorted(c for c in codes if c.isdigit() and c.startswith("2")) or [c for c in codes if c == "2XX"]
    success = Response(200, "ok", False, False)
    success_schema: dict[str, Any] = {"type": "object"}
    if ok_codes:
        success, success_schema = _response(convert, int(ok_codes[0].replace("XX", "00")), "ok", codes[ok_codes[0]])
    errors: dict[int, Response] = {}
    error_schemas: list[dict[str, Any]] = []
    for code in sorted(c for c in codes if c.isdigit() and c[0] in "345"):
        response, schema = _response(convert, int(code), reason(int(code)), codes[code])
        errors[int(code)] = response
        if response.json or response.wrapped:
            error_schemas.append(schema)
    return success, success_schema, errors, error_schemas


def _response(convert: _Converter, status: int, outcome: str, response: dict[str, Any]
              ) -> tuple[Response, dict[str, Any]]:
    content = response.get("content") or {}
    schema = _media_schema(content)
    if schema is None:
        if content:  # text, HTML, ...: the output's `text`
            return Response(status, outcome, False, False), dict(TEXT_OUTPUT)
        return Response(status, outcome, False, False), {"type": "object"}
    converted = convert.schema(schema)
    if convert.is_object(converted):
        return Response(status, outcome, True, False), converted
    return (Response(status, outcome, True, True),
            {"type": "object", "required": ["body"], "properties": {"body": converted}})


def _media_schema(content: Any) -> dict[str, Any] | None:
    """The schema of the JSON media type of a `content` map (None: no JSON body)."""
    if not isinstance(content, dict):
        return None
    for media, value in content.items():
        kind = str(media).split(";", 1)[0].strip().lower()
        if kind == "application/json" or kind.endswith("+json") or kind == "*/*":
            schema = value.get("schema") if isinstance(value, dict) else None
            return schema if isinstance(schema, dict) else {}
    return None


def _deref(data: dict[str, Any], node: Any) -> Any:
    """A parameter, request body, response or path item given by `$ref`, looked up (refs of refs too)."""
    for _ in range(20):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/")):
            return node
        target: Any = data
        for token in node["$ref"][2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            target = target.get(token) if isinstance(target, dict) else None
        if target is None:
            raise WfopsError(f"the OpenAPI document refers to {node['$ref']}, which it does not hold")
        node = target
    return node


def _derived_name(method: str, path: str) -> str:
    """`GET /items/{id}` -> `get_items_id`, for an operation without an operationId."""
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]+", "_", f"{method}_{path}")).strip("_")


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


class _Converter:
    """OpenAPI schemas as JSON Schema 2020-12, component refs as `#/$defs/<name>`."""

    def __init__(self, components: dict[str, Any], *, legacy: bool) -> None:
        self.components = components
        self.legacy = legacy
        self._done: dict[str, Any] = {}

    def schema(self, node: Any) -> Any:
        if isinstance(node, bool) or not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or (key.startswith("x-")):
                continue
            if key == "$ref" and isinstance(value, str) and value.startswith(_COMPONENT):
                out[key] = "#/$defs/" + value[len(_COMPONENT):]
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: self.schema(item) for name, item in value.items()}
            elif key in _SCHEMA_ONE:
                out[key] = self.schema(value)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.schema(item) for item in value]
            else:
                out[key] = value
        return self._legacy(out) if self.legacy else out

    def _legacy(self, out: dict[str, Any]) -> dict[str, Any]:
        for bound in ("Minimum", "Maximum"):
            flag = out.get(f"exclusive{bound}")
            if isinstance(flag, bool):
                del out[f"exclusive{bound}"]
                if flag and bound.lower() in out:
                    out[f"exclusive{bound}"] = out.pop(bound.lower())
        if out.pop("nullable", False) is True:
            kind = out.get("type")
            if isinstance(kind, str):
                out["type"] = [kind, "null"]
                if isinstance(out.get("enum"), list) and None not in out["enum"]:
                    out["enum"] = [*out["enum"], None]
            elif "$ref" in out or kind is None:
                return {"anyOf": [out, {"type": "null"}]}
        return out

    def defs_for(self, schema: Any) -> dict[str, Any]:
        """The component schemas `schema` refers to, transitively, converted."""
        found: dict[str, Any] = {}
        todo = list(_refs(schema))
        while todo:
            name = todo.pop()
            if name in found:
                continue
            if name not in self.components:
                raise WfopsError(f"the OpenAPI document refers to {_COMPONENT}{name}, which it does not hold")
            if name not in self._done:
                self._done[name] = self.schema(self.components[name])
            found[name] = self._done[name]
            todo += _refs(found[name])
        return dict(sorted(found.items()))

    def is_object(self, schema: Any) -> bool:
        for _ in range(20):
            if not isinstance(schema, dict):
                return False
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                schema = self.schema(self.components.get(ref[len("#/$defs/"):]))
                continue
            kind = schema.get("type")
            return kind == "object" or (kind is None and "properties" in schema)
        return False


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref[len("#/$defs/"):]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
