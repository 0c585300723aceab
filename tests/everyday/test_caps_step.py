"""`wfops caps show REF` ends with a ready-to-paste step; pasted into a workflow that
declares its input and state fields, it validates as it is."""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from tests.harness import run_cli
from wfops.api.results import CapabilityInfo
from wfops.api.step_snippet import example_step

HEAD = "a step calling it (paste under `steps:`; rename, rebind and reroute as needed):"


def pasted(text: str) -> dict[str, object]:
    lines = text.splitlines()
    snippet = "\n".join(lines[lines.index(HEAD) + 1:])
    steps = YAML(typ="safe").load(snippet)
    assert isinstance(steps, list) and len(steps) == 1
    return steps[0]


def test_show_ends_with_a_step_that_validates_once_pasted(tmp_path: Path) -> None:
    assert run_cli("init", str(tmp_path)).code == 0
    steps = []
    for ref in ("hello.greet", "std.format"):
        shown = run_cli("caps", "show", ref, cwd=tmp_path)
        assert shown.code == 0, shown.stderr
        steps.append(pasted(shown.stdout))
    greet, fmt = steps
    assert greet == {"id": "greet", "uses": "hello.greet", "with": {"name": "$input.name"},
                     "save": {"text": "state.text", "note": "state.note"}, "next": "end"}
    assert fmt["with"] == {"template": "$input.template", "values": "$input.values"}
    greet["next"] = "format"  # the author's routing
    workflow = {
        "name": "pasted", "version": 1,
        "input": {"type": "object", "properties": {"name": {"type": "string"}, "template": {"type": "string"},
                                                   "values": {"type": "object"}}},
        "state": {"text": {"type": "string"}, "note": {"type": "string"}},
        "steps": [greet, fmt],
    }
    (tmp_path / "workflows/pasted.yaml").write_text(json.dumps(workflow, indent=2))
    done = run_cli("validate", cwd=tmp_path)
    assert done.code == 0 and done.stdout.strip() == "ok: no problems", done.stdout


def test_several_outcomes_are_routed_and_unknown_outputs_saved_whole() -> None:
    cap = CapabilityInfo("notes.read", "notes", "python", "read", "", ["ok", "empty"], "sha256:x", "live",
                         {"type": "object", "required": ["path"],
                          "properties": {"path": {"type": "string", "description": "Where."}, "limit": {}}},
                         {"type": "object"})
    assert example_step(cap) == (
        "  - id: read\n"
        "    uses: notes.read\n"
        "    with:\n"
        "      path: $input.path   # string: Where.\n"
        "    # optional inputs: limit\n"
        "    save: state.read   # the whole output; declare it under `state:`\n"
        "    on: {ok: end, empty: end}\n")
