"""Write every file generated from the format declarations (the pydantic models):
the editor schemas (`wfops/schemas/*.json`) and the plain classes' fields
(`wfops/model/objects_generated.py`). Run `python -m wfops.model.generate` after
changing a model; tests fail while either is out of date.

Each model becomes a `<Name>Fields` class that declares the fields the model itself
declares (inherited ones come from its generated base, as in the models), by their
Python names, with their types as plain data holds them: `Annotated` constraints and
union tags dropped, a nested model named as its plain class in `wfops.model.objects`.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from wfops.atomic import write_atomic
from wfops.model.json_schema import model_of, write_all

#: The formats read by the plain loader. Workflow tests (`wftest`) are read by the models
#: alone: only `wfops test` reads them, and it runs workflows anyway.
PLAIN_KINDS = ("workflow", "deployment", "sources")

GENERATED = Path(__file__).resolve().parent / "objects_generated.py"

# Where the names a class variable's annotation may use come from.
_CLASS_VAR_NAMES = {"ClassVar": "typing", "StepKind": "wfops.model.kinds"}

_HEADER = '''"""The fields of the plain objects, generated from the pydantic models: do not edit.

Regenerate with `python -m wfops.model.generate` (a test fails while this is stale).
`wfops.model.objects` adds the methods; the plain loader fills the fields.
"""

from __future__ import annotations

'''


def fields_name(model: type[BaseModel]) -> str:
    return model.__name__.lstrip("_") + "Fields"


class _Writer:
    def __init__(self) -> None:
        self.order: list[type[BaseModel]] = []   # every model met, in the order met
        self.imports: dict[str, set[str]] = {}

    def need(self, module: str, name: str) -> None:
        self.imports.setdefault(module, set()).add(name)

    def visit(self, model: type[BaseModel]) -> None:
        if model in self.order:
            return
        self.order.append(model)
        for field in model.model_fields.values():
            self.type_text(field.annotation)

    def type_text(self, hint: Any) -> str:
        """A field's type as plain data holds it."""
        origin = get_origin(hint)
        if origin is Annotated:
            return self.type_text(get_args(hint)[0])
        if origin is Union or origin is types.UnionType:
            parts = [self.type_text(arg) for arg in get_args(hint)]
            return " | ".join(dict.fromkeys(part for text in parts for part in text.split(" | ")))
        if origin is Literal:
            self.need("typing", "Literal")
            return "Literal[" + ", ".join(json.dumps(arg) for arg in get_args(hint)) + "]"
        if origin is dict or origin is list:
            return f"{origin.__name__}[{', '.join(self.type_text(arg) for arg in get_args(hint))}]"
        if hint is Any:
            self.need("typing", "Any")
            return "Any"
        if hint is type(None):
            return "None"
        if hint in (str, int, float, bool):
            return str(hint.__name__)
        if isinstance(hint, type) and issubclass(hint, BaseModel):
            self.visit(hint)
            self.need("typing", "TYPE_CHECKING")
            return f"objects.{hint.__name__}"
        raise TypeError(f"no plain form for the field type {hint!r}")

    def base_of(self, model: type[BaseModel]) -> type[BaseModel] | None:
        """The nearest model above this one that declares fields (a config-only base has none)."""
        for base in model.__mro__[1:]:
            if issubclass(base, BaseModel) and base is not BaseModel and _own(base):
                return base
        return None

    def class_text(self, model: type[BaseModel]) -> str:
        base = self.base_of(model)
        lines = [f"class {fields_name(model)}({fields_name(base) if base else 'PlainModel'}):"]
        own = _own(model)
        for name, hint in own.items():
            if name in model.__class_vars__:
                for word in _CLASS_VAR_NAMES:
                    if word in str(hint):
                        self.need(_CLASS_VAR_NAMES[word], word)
                value = f" = {json.dumps(model.__dict__[name])}" if name in model.__dict__ else ""
                lines.append(f"    {name}: {hint}{value}")
        for name, field in model.model_fields.items():
            if name in own:
                lines.append(f"    {name}: {self.type_text(field.annotation)}")
        return "\n".join(lines) + "\n"


def _own(model: type[Any]) -> dict[str, Any]:
    """The annotations a class itself declares (fields and class variables), in order."""
    hints: dict[str, Any] = model.__dict__.get("__annotations__", {})
    return {name: hint for name, hint in hints.items() if not name.startswith("__")}


def _names(names: set[str]) -> str:
    """Imported names in isort's order: constants, classes, the rest."""
    return ", ".join(sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n)))


def generated_text() -> str:
    """The text of `objects_generated.py`, deterministic."""
    writer = _Writer()
    roots = {kind: model_of(kind) for kind in PLAIN_KINDS}
    for model in roots.values():
        writer.visit(model)
    classes: list[type[BaseModel]] = []

    def place(model: type[BaseModel]) -> None:  # bases first
        base = writer.base_of(model)
        if base is not None:
            place(base)
        if model not in classes:
            classes.append(model)
    for model in writer.order:
        place(model)
    bodies = [writer.class_text(model) for model in classes]
    models = [model.__name__ for model in writer.order]
    for name in writer.imports.get("wfops.model.kinds", ()):
        assert name in _CLASS_VAR_NAMES
    lines = [_HEADER]
    lines.append(f"from typing import {_names(writer.imports.get('typing', set()))}\n\n")
    for module in sorted(set(writer.imports) - {"typing"}):
        lines.append(f"from {module} import {_names(writer.imports[module])}\n")
    lines.append("from wfops.model.plain_base import PlainModel\n")
    lines.append("\nif TYPE_CHECKING:\n    from wfops.model import objects\n")
    lines.append("\n#: The plain class of each model (by the model's name, as the schemas' `$defs` call it).\n")
    lines.append("MODELS: tuple[str, ...] = (\n" + "".join(f"    {json.dumps(name)},\n" for name in models) + ")\n")
    lines.append("\n#: File kind -> the model of the whole file.\n")
    lines.append("ROOTS: dict[str, str] = {\n" + "".join(
        f"    {json.dumps(kind)}: {json.dumps(model.__name__)},\n" for kind, model in roots.items()) + "}\n")
    for body in bodies:
        lines.append("\n\n" + body)
    return "".join(lines)


def write_generated() -> list[Path]:
    write_atomic(GENERATED, generated_text())
    return [*write_all(), GENERATED]


if __name__ == "__main__":
    for path in write_generated():
        sys.stdout.write(f"wrote {path}\n")
