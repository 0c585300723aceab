"""The base of the plain objects (`wfops.model.objects`): fields in the instance dict, held
under their Python names (`with_` for `with`), as the pydantic models hold them."""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Any, Self


class PlainModel:
    """Fields in the instance dict (which the checks read by getattr, see `checks.context`)."""

    __slots__ = ("__dict__", "model_extra")

    def __init__(self, fields: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        # One attribute at a time, in the declared order: the instances of a class then share
        # one key table (`__dict__.update` gives each its own), half the memory of a project's
        # hundreds of thousands of steps.
        for name, value in fields.items():
            setattr(self, name, value)
        self.model_extra = extra

    def check(self) -> None:
        """The rules of this format its schema cannot state (raises `rules.Broken`)."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with some fields replaced, as pydantic's `model_copy` (unchecked)."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(update or {})
        copy.model_extra = self.model_extra
        return copy

    def to_data(self, *, drop_none: bool = False) -> dict[str, Any]:
        """The fields under their file keys (`with`), nested models as data, then the extra keys.
        `drop_none`: leave out fields that are None (unset and null mean the same), never a
        null inside user data (`with: {x: null}`)."""
        out = {key_of(name): _data(value, drop_none) for name, value in self.__dict__.items()
               if value is not None or not drop_none}
        for key, value in (self.model_extra or {}).items():
            out[key] = _data(value, drop_none)
        return out

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__name__}({shown})"


def _data(value: Any, drop_none: bool) -> Any:
    if isinstance(value, PlainModel):
        return value.to_data(drop_none=drop_none)
    if isinstance(value, Mapping):
        return {str(key): _data(item, drop_none) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_data(item, drop_none) for item in value]
    return value


def attribute_of(key: str) -> str:
    """The attribute a file key is held in (pydantic's alias convention here: `with` -> `with_`)."""
    return key + "_" if keyword.iskeyword(key) else key


def key_of(attribute: str) -> str:
    return attribute[:-1] if attribute.endswith("_") and keyword.iskeyword(attribute[:-1]) else attribute
