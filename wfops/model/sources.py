"""`sources.yaml`: the concrete sources a project can bind."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from wfops.model import rules
from wfops.model.errors import enforce
from wfops.model.workflow import Duration, Retry

SOURCE_ID_PATTERN = r"^[A-Za-z0-9_-]+$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
HEADER_NAME_PATTERN = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"


def _inside_project(value: str) -> str:
    enforce(rules.check_cwd, value)
    return value


#: A working directory: relative to the project root, and inside it.
ProjectDir = Annotated[str, AfterValidator(_inside_project)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class PythonSource(_Strict):
    kind: Literal["python"] = Field(description="A python module of the project: each @wfops.node function "
                                    "is a capability.")
    module: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$",
                        description="Dotted module importable relative to the project root.")
    description: str | None = Field(None, description="What the source offers, for people.")


class ToolCache(_Strict):
    ttl: Duration | None = Field(None, description="How long a result is served; none: no expiry.")
    unannotated: bool = Field(False, description="Opt in for a tool the server does not annotate read-only: "
                              "you know its calls have no side effects.")


class ToolDefaults(_Strict):
    """What a step calling this tool gets unless it gives its own `retry`/`timeout`/`cache`."""

    retry: Retry | None = Field(None, description="As a step's `retry:`.")
    timeout: float | None = Field(None, gt=0, description="Seconds per attempt.")
    cache: bool | Duration | ToolCache | None = Field(
        None, description="Its step cache default (`true`, a ttl, or `{ttl, unannotated}`); applied only "
        "when the server annotates the tool read-only, unless `unannotated: true`. Not part of its contract.")


#: MCP's log levels (RFC 5424 severities, least severe first), and `off`.
McpLogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "off"]


class OAuthClientCredentials(_Strict):
    """The OAuth 2.0 client credentials grant (RFC 6749 4.4), as the MCP SDK runs it."""

    kind: Literal["client_credentials"] = Field(
        description="The grant: the client's own id and secret are exchanged for an access token.")
    issuer: str = Field(pattern=r"^https?://[^/?#]+", description="The authorization server's issuer URL. "
                        "Its metadata must name exactly this issuer, and the token request goes to its "
                        "origin and nowhere else, whatever the MCP server's metadata points at.")
    client_id: str = Field(min_length=1, description="The client's id; may use ${NAME}.")
    client_secret: str = Field(min_length=1, description='The client\'s secret, as a reference: "${NAME}" '
                               "(an environment variable of wfops, never stored or shown).")
    scope: str | None = Field(None, min_length=1, description="Space-separated scopes to ask for "
                              "(default: what the MCP server's metadata asks for).")
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] = Field(
        "client_secret_basic", description="How the secret is sent to the token endpoint: an HTTP Basic "
        "header, or form fields.")

    @field_validator("client_secret")
    @classmethod
    def _named(cls, value: str) -> str:
        enforce(rules.check_secret_reference, value)
        return value


class McpSource(_Strict):
    kind: Literal["mcp"] = Field(description="An MCP server (stdio `command` or HTTP `url`): each tool is a "
                                 "capability.")
    command: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, description="argv list of a stdio server.")
    url: str | None = Field(None, pattern=r"^https?://", description="Streamable HTTP endpoint.")
    env: dict[Annotated[str, Field(pattern=ENV_NAME_PATTERN)], str] = Field(
        default_factory=dict, description="Extra environment of the server; values may use ${NAME}.")
    cwd: ProjectDir | None = Field(None, description="Working directory of a stdio server, inside the project.")
    timeout: float = Field(30, gt=0, description="Seconds per tool call.")
    tools: dict[str, ToolDefaults] = Field(default_factory=dict, description="Tool name -> its `retry`/"
                                           "`timeout` defaults (part of its contract in wfops.lock) and "
                                           "its `cache` default.")
    description: str | None = Field(None, description="What the source offers, for people.")
    headers: dict[Annotated[str, Field(pattern=HEADER_NAME_PATTERN)], str] = Field(
        default_factory=dict, description="HTTP headers sent to the `url:` server (and only to its host); "
        "values may use ${NAME} (a secret from the environment, never stored or shown).")
    log_level: McpLogLevel = Field(
        "info", description="The least severe log notification the server is asked to send during a tool "
        "call (kept in that step's log); `off` asks for none.")


    auth: OAuthClientCredentials | None = Field(
        None, description="How a `url:` source obtains its bearer token: OAuth client credentials. The "
        "token lives in memory for the session; it is never stored or shown.")

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        enforce(rules.check_command_form, value)
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpSource:
        enforce(rules.check_transport, self.command, self.url, self.env, self.cwd)
        enforce(rules.check_headers_need_url, self.url, self.headers)
        enforce(rules.check_auth_needs_url, self.url, self.headers, self.auth)
        return self


class OpenapiSource(_Strict):
    kind: Literal["openapi"] = Field(description="An HTTP API described by its OpenAPI document.")
    spec: str = Field(min_length=1, description="The OpenAPI 3.0 or 3.1 document (YAML or JSON): a file "
                      "relative to the project root, or an http(s) URL fetched when the project is checked; its "
                      "bytes are hashed into the lock.")
    base_url: str = Field(pattern=r"^https?://[^/?#]+", description="Where requests go; only here "
                          "(a redirect to another host is refused).")
    headers: dict[Annotated[str, Field(pattern=HEADER_NAME_PATTERN)], str] = Field(
        default_factory=dict, description="Headers of every request; values may use ${NAME} "
        "(a secret from the environment, never stored or shown).")
    timeout: float = Field(30, gt=0, description="Seconds per request.")
    operations: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="Only these operations (by operationId, or `METHOD /path`) become capabilities.")
    max_body_bytes: int = Field(
        10 * 1024 * 1024, gt=0, description="A request or response body larger than this fails the step.")
    description: str | None = Field(None, description="What the source offers, for people.")

    @field_validator("spec")
    @classmethod
    def _in_repo(cls, value: str) -> str:
        enforce(rules.check_spec_path, value)
        return value


class CommandCapability(_Strict):
    description: str | None = Field(None, description="What the capability does, for people and agents.")
    argv: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description='The program and its arguments; "{field}" fills one whole argument '
        "from the input field of that name.")
    shell: bool = Field(False, description="Run `argv` (one string) through /bin/sh: its placeholders are "
                        "shell-quoted, but prefer an argv list.")
    input: dict[str, Any] = Field(default_factory=dict,
                                  description="JSON Schema of the input (default: any object).")
    output: dict[str, Any] = Field(default_factory=dict,
                                   description="JSON Schema of the output, the parsed stdout (default: any object).")
    stdout: Literal["text", "json", "jsonl"] = Field(
        "text", description="How stdout becomes the output: `{text: ...}`, the JSON object, or `{items: [...]}`.")
    outcomes: dict[Annotated[str, Field(pattern=r"^[0-9]{1,3}$")], Annotated[str, Field(
        pattern=r"^[a-z][a-z0-9_]*$")]] = Field(
        default_factory=dict, description="Exit code -> outcome (default `{0: ok}`); any other exit code fails the step.")
    cwd: ProjectDir | None = Field(None, description="Working directory inside the project (default: the source's).")
    env: dict[Annotated[str, Field(pattern=ENV_NAME_PATTERN)], str] = Field(
        default_factory=dict, description="Extra environment; values may use ${NAME}.")
    timeout: float | None = Field(None, gt=0, description="Seconds; the process group is killed after.")

    @field_validator("argv", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        enforce(rules.check_argv_form, value)
        return value


class CommandSource(_Strict):
    kind: Literal["command"] = Field(description="Programs run with an argv template.")
    capabilities: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")], CommandCapability] = Field(
        min_length=1, description="Each capability: a program run once per call.")
    cwd: ProjectDir | None = Field(None, description="Working directory inside the project (default: its root).")
    env: dict[Annotated[str, Field(pattern=ENV_NAME_PATTERN)], str] = Field(
        default_factory=dict, description="Extra environment of every capability; values may use ${NAME}.")
    timeout: float = Field(60, gt=0, description="Seconds per call; the process group is killed after.")
    max_output_bytes: int = Field(10 * 1024 * 1024, gt=0, description="Stdout larger than this fails the step.")
    description: str | None = Field(None, description="What the source offers, for people.")


SourceSpec = Annotated[PythonSource | McpSource | OpenapiSource | CommandSource, Field(discriminator="kind")]


class SourcesFile(_Strict):
    sources: dict[Annotated[str, Field(pattern=SOURCE_ID_PATTERN)], SourceSpec] = Field(
        default_factory=dict, description="Source id -> a python module or an MCP server (`std` is built in).")

    @field_validator("sources")
    @classmethod
    def _std_reserved(cls, value: dict[str, SourceSpec]) -> dict[str, SourceSpec]:
        enforce(rules.check_source_ids, value)
        return value
