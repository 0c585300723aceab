"""Deployment files (`deployments/*.yaml`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from wfops.model import rules
from wfops.model.errors import enforce
from wfops.model.workflow import NAME_PATTERN

#: A Dask scheduler address as `distributed.Client` takes it.
DASK_ADDRESS = r"^(tcp|tls|ws|wss|inproc|ucx)://\S+$"


class LocalExecutorSpec(BaseModel):
    """Capability calls run in the driver process (the default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["local"] = Field("local", description="Calls run in the process that drives the run.")


class DaskExecutorSpec(BaseModel):
    """Python-source capability calls run as tasks on a Dask cluster (`pip install 'wfops[dask]'`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["dask"] = Field(description="Python-source calls run as tasks on a Dask cluster.")
    address: str = Field(pattern=DASK_ADDRESS, description="The scheduler, e.g. tcp://HOST:8786.")


ExecutorSpec = Annotated[LocalExecutorSpec | DaskExecutorSpec, Field(discriminator="kind")]

#: A cron expression's shape: five fields, or one of the `@hourly`-style aliases. What the fields
#: mean (ranges, impossible dates) is checked by the cron library in `wfops validate`.
CRON_PATTERN = r"^\s*(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|\S+(\s+\S+){4})\s*$"
#: A duration: a whole number of seconds, minutes, hours or days.
DURATION_PATTERN = r"^[1-9][0-9]{0,8}[smhd]$"


class ScheduleEntry(BaseModel):
    """One time-table of a deployment: `wfops schedule tick` starts a run at each of its times."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str | None = Field(None, pattern=NAME_PATTERN,
                             description="Names the entry in its runs' slots (default: its cron and timezone).")
    cron: str = Field(pattern=CRON_PATTERN,
                      description="Five-field cron (minute hour day-of-month month day-of-week), or @hourly, "
                                  "@daily, @weekly, @monthly, @yearly.")
    timezone: str = Field("UTC", description="IANA time zone the cron is read in, e.g. Europe/Berlin.")
    input: dict[str, Any] = Field(default_factory=dict, description="Merged over the deployment's input.")
    overlap: Literal["skip", "allow", "cancel_previous"] = Field(
        "skip", description="When the previous scheduled run of this deployment is still going: start none "
                            "(skip), start anyway (allow), or cancel it and start (cancel_previous).")
    missed: Literal["latest", "all", "none"] = Field(
        "latest", description="Times passed without a tick, within `window`: start the newest (latest), each "
                              "(all), or none of them (none: only a time of the tick's own minute).")
    window: str | None = Field(None, pattern=DURATION_PATTERN,
                               description="How far back a late tick catches up, e.g. 90s, 15m, 6h, 2d "
                                           "(default: the shortest interval between two times).")
    enabled: bool = Field(True, description="false: the entry starts nothing (it is still validated).")


class Deployment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(pattern=NAME_PATTERN, description="Unique in the project; what `wfops run` takes.")
    description: str | None = Field(None, description="What the deployment is for, for people.")
    workflow: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*(@sha256:[0-9a-f]{4,64})?$",
                          description="Workflow name, or name@sha256:<prefix> to pin an artifact.")
    bindings: dict[str, str] = Field(default_factory=dict, description="Logical source -> concrete source id.",
                                     json_schema_extra={"propertyNames": {"not": {"const": "std"}}})
    drift: Literal["fail", "warn"] = Field("fail", description="fail: a capability contract that changed since "
                                           "wfops.lock refuses the run; warn: it is reported and the run goes on.")
    input: dict[str, Any] = Field(default_factory=dict, description="Defaults, merged under CLI input.")
    secrets: list[str] = Field(default_factory=list, description="Env var names readable as $secret.NAME.")
    # A default instance, not a factory, so the schema states it (the plain loader reads it there).
    executor: ExecutorSpec = Field(LocalExecutorSpec(),
                                   description="Where capability calls run: local (default) or a Dask cluster.")
    schedule: list[ScheduleEntry] = Field(default_factory=list,
                                          description="When `wfops schedule tick` starts runs of this deployment.")

    @field_validator("bindings")
    @classmethod
    def _std_fixed(cls, value: dict[str, str]) -> dict[str, str]:
        enforce(rules.check_bindings, value)
        return value
