"""The editor schemas (`wfops schema`), generated from the pydantic models.

yaml-language-server reads draft-07, so the output is labelled draft-07; the
`$defs` references pydantic writes are plain JSON pointers and still resolve.
The committed copies under `wfops/schemas/` are regenerated with
`python -m wfops.model.generate` and guarded by a test.
"""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wfops.atomic import write_atomic

if TYPE_CHECKING:
    from pydantic import BaseModel

DRAFT_07 = "http://json-schema.org/draft-07/schema#"

# kind -> (module, model class, title shown by editors)
KINDS: dict[str, tuple[str, str, str]] = {
    "workflow": ("wfops.model.workflow", "Workflow", "wfops workflow (workflows/*.yaml)"),
    "deployment": ("wfops.model.deployment", "Deployment", "wfops deployment (deployments/*.yaml)"),
    "sources": ("wfops.model.sources", "SourcesFile", "wfops sources (sources.yaml)"),
    "wftest": ("wfops.model.wftest", "TestFile", "wfops workflow tests (tests/**/*.wftest.yaml)"),
}

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def model_of(kind: str) -> type[BaseModel]:
    """The pydantic model of one file kind; KeyError for an unknown kind."""
    module, name, _ = KINDS[kind]
    model: type[BaseModel] = getattr(import_module(module), name)
    return model


def schema_for(kind: str) -> dict[str, Any]:
    """The JSON Schema of one file kind; KeyError for an unknown kind."""
    schema = model_of(kind).model_json_schema(by_alias=True)
    schema.pop("$id", None)
    return {"$schema": DRAFT_07, **schema, "title": KINDS[kind][2]}


def schema_text(kind: str) -> str:
    """Deterministic text: sorted keys, indent 2, a final newline."""
    return json.dumps(schema_for(kind), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def committed_path(kind: str) -> Path:
    return SCHEMA_DIR / f"{kind}.schema.json"


def write_all() -> list[Path]:
    written = []
    for kind in KINDS:
        path = committed_path(kind)
        write_atomic(path, schema_text(kind))
        written.append(path)
    return written
