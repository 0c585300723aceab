"""`sources.yaml`: the concrete sources a project can bind."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from wfops.model.errors import invalid

SOURCE_ID_PATTERN = r"^[A-Za-z0-9_-]+$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class PythonSource(_Strict):
    kind: Literal["python"]
    module: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$",
                        description="Dotted module importable relative to the project root.")
    description: str | None = None


class McpSource(_Strict):
    kind: Literal["mcp"]
    command: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, description="argv list of a stdio server.")
    url: str | None = Field(None, pattern=r"^https?://", description="Streamable HTTP endpoint.")
    env: dict[Annotated[str, Field(pattern=ENV_NAME_PATTERN)], str] = Field(
        default_factory=dict, description="Extra environment of the server; values may use ${NAME}.")
    cwd: str | None = None
    timeout: float = Field(30, gt=0, description="Seconds per tool call.")
    description: str | None = None

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise invalid("shell-command", "`command` must be an argv list; a shell string is not allowed",
                          "write the command as a list, e.g. `command: [python, -m, server]`; wfops never "
                          "runs a shell")
        return value

    @field_validator("cwd")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        # Caught here, in the file, where it can be seen; a symlink out is refused when the
        # server starts (wfops.sources.mcp).
        if value is not None and (value.startswith(("/", "\\")) or ".." in value.replace("\\", "/").split("/")):
            raise invalid("invalid-source", f"`cwd` {value!r} leaves the project",
                          "give a directory inside the project, relative to its root (e.g. `cwd: servers`)")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpSource:
        if (self.command is None) == (self.url is None):
            raise invalid("invalid-source", "an mcp source needs exactly one of `command` or `url`",
                          "use `command: [argv, ...]` for a stdio server or `url: http://...` for HTTP")
        if self.url is not None and (self.env or self.cwd):
            raise invalid("invalid-source", "`env` and `cwd` apply only to a `command` source",
                          "remove `env` and `cwd`, or start the server with `command:`")
        return self


SourceSpec = Annotated[PythonSource | McpSource, Field(discriminator="kind")]


class SourcesFile(_Strict):
    sources: dict[Annotated[str, Field(pattern=SOURCE_ID_PATTERN)], SourceSpec] = Field(default_factory=dict)

    @field_validator("sources")
    @classmethod
    def _std_reserved(cls, value: dict[str, SourceSpec]) -> dict[str, SourceSpec]:
        if "std" in value:
            raise invalid("reserved-source-id", "`std` is the platform source and cannot be redeclared",
                          "give the source another id")
        return value
