"""The checks read a step's fields with `getattr(step, name, None)`: exact only while no step
class has a class attribute (a method, a ClassVar) named like a field of any step kind."""

from __future__ import annotations

from wfops.model.objects import STEP_CLASSES


def _field_names(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        names |= {name for name, kind in getattr(klass, "__annotations__", {}).items()
                  if not str(kind).startswith("ClassVar")}
    return names


def test_no_step_class_attribute_is_named_like_a_step_field() -> None:
    fields = set().union(*(_field_names(cls) for cls in STEP_CLASSES.values()))
    assert {"uses", "foreach", "with_", "catch", "then", "else_", "parallel"} <= fields
    for cls in STEP_CLASSES.values():
        shadowing = sorted(name for name in fields if name in vars_of(cls))
        assert shadowing == [], f"{cls.__name__} has class attributes named like step fields: {shadowing}"


def vars_of(cls: type) -> set[str]:
    """Names the class and its bases define: what getattr finds on an instance that lacks them."""
    return {name for klass in cls.__mro__ for name in vars(klass)}
