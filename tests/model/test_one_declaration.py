"""Each file format is declared once, by its pydantic models: the editor schema, the plain
classes' fields (a generated module), the strict plain loader, the models' error wording and
the engine's plan all follow from it. A field added to a model shows up in each of them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from wfops.compiler.artifact import normalize_workflow
from wfops.engine.plan import compile_workflow
from wfops.model.generate import GENERATED, generated_text
from wfops.model.objects import CLASSES, ForeachStep, Workflow
from wfops.model.plain import validated

REPO = Path(__file__).resolve().parents[2]
REGENERATE = "python -m wfops.model.generate"

FOREACH = {"name": "w", "steps": [
    {"id": "each", "foreach": "$input.items", "uses": "std.echo", "with": {"value": "$item"}, "next": "done"},
    {"id": "done", "end": "ok"}]}


def test_the_generated_fields_are_current() -> None:
    assert GENERATED.read_text(encoding="utf-8") == generated_text(), (
        f"{GENERATED.name} is stale; regenerate it with: {REGENERATE}")


def test_every_model_has_its_plain_class_with_its_fields() -> None:
    from wfops.model.json_schema import schema_for

    defs = {name: spec for kind in ("workflow", "deployment", "sources")
            for name, spec in schema_for(kind)["$defs"].items()}
    assert set(CLASSES) == set(defs) | {"Workflow", "Deployment", "SourcesFile"}
    workflow = validated("workflow", FOREACH)
    assert isinstance(workflow, Workflow) and isinstance(workflow.steps[0], ForeachStep)
    step = workflow.steps[0]
    assert set(defs["ForeachStep"]["properties"]) == {name.rstrip("_") for name in step.__dict__}


def test_the_plan_holds_every_declared_field_with_the_declarations_defaults() -> None:
    workflow = validated("workflow", FOREACH)
    assert isinstance(workflow, Workflow)
    sp = compile_workflow(workflow).steps["each"]
    assert sp.step is workflow.steps[0]
    assert (sp.step.mode, sp.step.on_item_error, sp.parallel, sp.on_item_error) == ("serial", "fail", False, "fail")
    # A stored form without the defaulted keys (an older artifact) is planned with the defaults.
    stored = normalize_workflow(workflow)
    for key in ("mode", "on_item_error", "with"):
        del stored["steps"][0][key]
    again = compile_workflow(stored).steps["each"]
    # (`next` is stored as `on`; the `with` dropped above is the declared empty default.)
    assert again.step.__dict__ == {**sp.step.__dict__, "with_": {}, "next": None, "on": {"ok": "done"}}
    assert again.routes == sp.routes


# Run in a scratch copy of the package: add the field, regenerate, then read it back.
_PROBE = textwrap.dedent('''
    import json, sys
    from wfops.model import plain
    from wfops.compiler.artifact import normalize_workflow
    from wfops.engine.plan import compile_workflow
    from wfops.model.json_schema import committed_path

    document = json.loads(sys.argv[1])
    out = {}
    schema = json.loads(committed_path("workflow").read_text())
    out["schema"] = schema["$defs"]["ForeachStep"]["properties"].get("batch")
    unset = plain.load("workflow", document)
    document["steps"][0]["batch"] = 5
    loaded = plain.load("workflow", document)
    out["plain"] = [unset.steps[0].batch, loaded.steps[0].batch]
    out["plain_without_pydantic"] = "pydantic" not in sys.modules
    out["normalized"] = normalize_workflow(loaded)["steps"][0].get("batch")
    out["plan"] = [compile_workflow(unset).steps["each"].step.batch,
                   compile_workflow(normalize_workflow(loaded)).steps["each"].step.batch]
    document["steps"][0]["batch"] = 0
    out["plain_refuses"] = plain.load("workflow", document) is None
    from pydantic import ValidationError
    from wfops.model.workflow import Workflow
    try:
        Workflow.model_validate(document)
    except ValidationError as exc:
        out["wording"] = [[str(part) for part in e["loc"]] + [e["msg"]] for e in exc.errors()]
    print(json.dumps(out))
''')

_FIELD = '    batch: int = Field(1, ge=1, description="Items per call.")\n'


@pytest.mark.slow  # a subprocess in a copy of the package
def test_a_field_added_to_one_declaration_reaches_schema_plain_load_and_plan(tmp_path: Path) -> None:
    shutil.copytree(REPO / "wfops", tmp_path / "wfops", ignore=shutil.ignore_patterns("__pycache__"))
    declaration = tmp_path / "wfops" / "model" / "workflow.py"
    text = declaration.read_text(encoding="utf-8")
    anchor = '    @model_validator(mode="after")\n    def _one_body(self) -> ForeachStep:'
    assert text.count(anchor) == 1
    declaration.write_text(text.replace(anchor, _FIELD + "\n" + anchor), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(*argv: str) -> str:
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("-m", "wfops.model.generate")
    generated = (tmp_path / "wfops" / "model" / "objects_generated.py").read_text(encoding="utf-8")
    assert "    batch: int" in generated.split("class ForeachStepFields")[1].split("\n\n\n")[0].splitlines()
    out: dict[str, Any] = json.loads(run("-c", _PROBE, json.dumps(FOREACH)))
    assert out["schema"] == {"default": 1, "description": "Items per call.", "minimum": 1, "title": "Batch",
                             "type": "integer"}
    assert out["plain"] == [1, 5] and out["plain_without_pydantic"]
    assert out["normalized"] == 5
    assert out["plan"] == [1, 5]
    assert out["plain_refuses"]
    assert out["wording"] == [["steps", "0", "foreach", "batch", "Input should be greater than or equal to 1"]]
