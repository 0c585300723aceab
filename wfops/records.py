"""Frozen records without `dataclasses`: what a frozen dataclass gives, for plain classes with slots.

A dataclass compiles its methods from source text when its class is created (~1 ms each), and
importing `dataclasses` brings `inspect`, `ast`, `dis` and `tokenize`; `wfops validate` starts
cold on every commit, and the records every part of wfops shares (a finding, a report, a value
path, a capability, a step's context and result) are on that path. A subclass of `Record` names
its fields in `__slots__` (in order, after its bases') and sets them in its own typed
`__init__` with `init(self, name, value)`; it then has:

- equality by class and fields (those named in the class keyword `uncompared=` left out),
  and a hash of the same fields (so a record holding a dict is unhashable, as a frozen
  dataclass is);
- a repr `Name(field=value, ...)`;
- immutability: assigning or deleting a field raises `AttributeError`; `replace(**changes)`
  returns a changed copy (through `__init__`, so every field must be one of its keywords);
- pickling and `copy` (a frozen slots class needs its own state methods).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, NoReturn, Self

__all__ = ["Record", "init"]

#: Sets a field of a record in its `__init__` (a record's own `__setattr__` refuses).
init = object.__setattr__


class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()     # every field, in order: repr, replace, pickling
    _uncompared: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[tuple[str, ...]] = ()   # the fields equality and the hash read
    _key: ClassVar[staticmethod[[Any], tuple[Any, ...]]]  # a record -> its compared fields' values

    def __init_subclass__(cls, *, uncompared: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Where a record annotates its fields (what mypy reads), the annotations and the slots
        # name the same fields in the same order: one list may not drift from the other.
        own = tuple(name for name in cls.__dict__.get("__slots__", ()) if not name.startswith("__"))
        typed = tuple(name for name, kind in cls.__dict__.get("__annotations__", {}).items()
                      if not str(kind).startswith("ClassVar"))
        if typed and own != typed:
            raise TypeError(f"{cls.__qualname__}: __slots__ {own} and the annotated fields {typed} differ")
        cls._fields = tuple(name for klass in reversed(cls.__mro__) for name in klass.__dict__.get("__slots__", ())
                            if not name.startswith("__"))
        cls._uncompared = (*cls._uncompared, *uncompared)
        cls._compared = tuple(name for name in cls._fields if name not in cls._uncompared)
        # C reads the fields (a getattr loop in Python costs three times as much per hash)
        cls._key = staticmethod(_values(cls._compared))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._key(self) == self._key(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (field name -> value); an unknown name is a TypeError."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is immutable (use replace())")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is immutable")

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._fields])

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._fields, state, strict=True):
            init(self, name, value)


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A reader of the named fields' values, as a tuple (`attrgetter` gives one for two or more)."""
    if len(names) > 1:
        return attrgetter(*names)
    return lambda record: tuple([getattr(record, name) for name in names])
