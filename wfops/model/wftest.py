"""The workflow test file format (`tests/**/*.wftest.yaml`, docs/testing.md).

One file tests one workflow: a list of cases, each with an input, mocked
capability results, answers to interrupts and the expected end of the run.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from wfops.model.workflow import NAME_PATTERN


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class MockError(_Strict):
    type: str = Field("CapabilityError", pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$",
                      description="The error type the step fails with (default CapabilityError).")
    message: str = Field(description="The error message.")


def _form(value: Any) -> str:
    """Which form a value takes: one item (a mapping or a message) or a list of them. A
    discriminated union, so a typo is reported once, in the form written."""
    return "many" if isinstance(value, list) else "text" if isinstance(value, str) else "one"


def _one_or_many(value: Any) -> str:
    return "many" if isinstance(value, list) else "one"


ErrorSpec = Annotated[Annotated[str, Tag("text")] | Annotated[MockError, Tag("one")], Discriminator(_form)]


class MockResult(_Strict):
    """One mocked call: an outcome and output, or an error to raise."""

    output: dict[str, Any] | None = Field(None, description="The output the call returns (checked against the "
                                          "capability's output schema in wfops.lock).")
    outcome: str = Field("ok", pattern=r"^[A-Za-z0-9_-]+$",
                         description="The outcome the call returns (must be one the capability declares).")
    error: ErrorSpec | None = Field(None, description="Raise a step failure instead of returning: a "
                                          "message, or `{type, message}`. `retry` and `catch` apply.")


class Answer(_Strict):
    """The answer to an interrupt, as `wfops resume --outcome --payload` would give it."""

    outcome: str = Field(pattern=r"^[A-Za-z0-9_-]+$", description="One of the interrupt's `on` outcomes.")
    payload: Any = Field(None, description="The resume payload (checked against `resume_schema`).")


class Expect(_Strict):
    """What the run must end with; only the keys given are compared."""

    status: Literal["completed", "failed", "interrupted"] | None = Field(None, description="The run's status.")
    outcome: str | None = Field(None, description="The run's outcome (`ok`, or an `end:` value).")
    output: Any = Field(None, description="The run's output, exactly.")
    output_includes: Any = Field(None, description="A subset of the run's output: mappings compare key by key, "
                                 "anything else exactly.")
    path: list[str] | None = Field(None, description="Top-level step ids in the order taken (plus `end` after "
                                   "`next: end`).")
    state: dict[str, Any] | None = Field(None, description="State field -> value, for the fields listed.")
    error: dict[str, Any] | None = Field(None, description="A subset of the run's error `{type, message, step}`.")


Mock = Annotated[Annotated[MockResult, Tag("one")] | Annotated[list[MockResult], Tag("many")],
                Discriminator(_one_or_many)]
Answers = Annotated[Annotated[Answer, Tag("one")] | Annotated[list[Answer], Tag("many")],
                   Discriminator(_one_or_many)]


class Case(_Strict):
    name: str = Field(min_length=1, description="Unique in the file; `-k` matches it.")
    input: dict[str, Any] = Field(default_factory=dict, description="The run input.")
    mocks: dict[str, Mock] = Field(
        default_factory=dict,
        description="Capability ref (has a dot: the logical ref as written in `uses:`) or step id / trace path "
                    "(e.g. `extract`, `sub/fetch`, `fan[2]`) -> a result, or a list of results for successive calls.")
    interrupts: dict[str, Answers] = Field(
        default_factory=dict, description="Interrupt step id (or trace path) -> its answer, or a list for "
                                          "successive visits. An interrupt without an answer ends the run "
                                          "`interrupted`.")
    real: list[str] = Field(default_factory=list, description="Capability refs that may run for real unmocked "
                            "(`std` always may).")
    expect: Expect = Field(default_factory=Expect, description="What the run must end with.")


class TestFile(_Strict):
    __test__ = False  # not a pytest class

    workflow: str = Field(pattern=NAME_PATTERN, description="The workflow under test.")
    deployment: str | None = Field(None, description="Take logical -> concrete source bindings from this "
                                   "deployment (default: the one deployment of the workflow, if exactly one).")
    cases: list[Case] = Field(min_length=1, description="The test cases.")
