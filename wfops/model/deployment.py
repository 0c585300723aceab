"""Deployment files (`deployments/*.yaml`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from wfops.model.errors import invalid
from wfops.model.workflow import NAME_PATTERN


class Deployment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(pattern=NAME_PATTERN)
    description: str | None = None
    workflow: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*(@sha256:[0-9a-f]{4,64})?$",
                          description="Workflow name, or name@sha256:<prefix> to pin an artifact.")
    bindings: dict[str, str] = Field(default_factory=dict, description="Logical source -> concrete source id.",
                                     json_schema_extra={"propertyNames": {"not": {"const": "std"}}})
    drift: Literal["fail", "warn"] = "fail"
    input: dict[str, Any] = Field(default_factory=dict, description="Defaults, merged under CLI input.")
    secrets: list[str] = Field(default_factory=list, description="Env var names readable as $secret.NAME.")

    @field_validator("bindings")
    @classmethod
    def _std_fixed(cls, value: dict[str, str]) -> dict[str, str]:
        if "std" in value:
            raise invalid("reserved-source-id", "`std` is the built-in source and cannot be rebound",
                          "remove the `std` binding; bind the logical sources your workflows name instead",
                          ("std",))
        return value

    @property
    def workflow_name(self) -> str:
        return self.workflow.split("@", 1)[0]

    @property
    def pin(self) -> str | None:
        return self.workflow.split("@sha256:", 1)[1] if "@sha256:" in self.workflow else None

    def concrete_source(self, logical: str) -> str:
        return self.bindings.get(logical, logical)
