"""Artifact hashes: formatting never changes them, meaning always does."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wfops.compiler.artifact import ArtifactSet, load_artifact, normalize_workflow
from wfops.loader.yaml import load_yaml_text
from wfops.model.plain import validated


def workflow_text() -> str:
    import textwrap

    from tests.lock.conftest import FILES

    return textwrap.dedent(FILES["workflows/hello.yaml"]).lstrip("\n")


def hash_of(text: str) -> str:
    model = validated("workflow", load_yaml_text(text, "w.yaml").data)
    loud = validated("workflow", {"name": "loud", "steps": [{"id": "e", "end": "done"}]})
    return ArtifactSet({"hello": model, "loud": loud}).hash_of("hello")


def shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return {k: shuffled(value[k], rnd) for k in keys}
    if isinstance(value, list):
        return [shuffled(v, rnd) for v in value]
    return value


def as_yaml(value: Any, rnd: random.Random, indent: int = 0) -> str:
    """Block YAML with random comments and random flow-style islands."""
    pad = " " * indent
    if isinstance(value, dict) and value and rnd.random() < 0.7:
        lines = []
        for key, item in value.items():
            comment = "  # note" if rnd.random() < 0.3 else ""
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:{comment}\n{as_yaml(item, rnd, indent + 2)}")
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}{comment}")
        return "\n".join(lines)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        items = []
        for item in value:
            body = as_yaml(item, rnd, indent + 2).lstrip()
            items.append(f"{pad}- {body}")
        return "\n".join(items)
    return pad + json.dumps(value)


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_key_order_comments_and_style_never_change_the_hash(rnd: random.Random) -> None:
    original = workflow_text()
    data = load_yaml_text(original, "w.yaml").data
    rewritten = "# rewritten\n" + as_yaml(shuffled(data, rnd), rnd) + "\n"
    assert hash_of(rewritten) == hash_of(original)


SEMANTIC_EDITS = [
    ("with: {name: $input.name}", "with: {name: $input.other}"),
    ("save: {text: state.text}\n    next: loud", "save: {text: state.text}\n    next: loud\n    timeout: 4"),
    ("text: {type: string}", "text: {type: string, reducer: append}"),
    ("output: {text: $state.text}", "output: {txt: $state.text}"),
    ("name: hello", "name: hello\ndescription: now documented"),
    ("next: end", "next: loud"),
]


def test_every_semantic_edit_changes_the_hash() -> None:
    original = workflow_text()
    base = hash_of(original)
    for old, new in SEMANTIC_EDITS:
        assert old in original, old
        assert hash_of(original.replace(old, new, 1)) != base, new


def test_normalized_form_round_trips_and_is_a_fixed_point() -> None:
    model = validated("workflow", load_yaml_text(workflow_text(), "w.yaml").data)
    normalized = normalize_workflow(model)
    assert normalize_workflow(load_artifact(normalized)) == normalized
    assert normalized["start"] == "greet"
    assert all("next" not in step for step in normalized["steps"])


def test_cycles_and_missing_children_do_not_recurse_forever() -> None:
    a = validated("workflow", {"name": "a", "steps": [{"id": "s", "workflow": "b", "next": "end"}]})
    b = validated("workflow", {"name": "b", "steps": [{"id": "s", "workflow": "a", "next": "end"},
                                                      {"id": "t", "workflow": "zz", "next": "end"}]})
    artifacts = ArtifactSet({"a": a, "b": b})
    assert len(artifacts.hash_of("a")) == 64 and len(artifacts.hash_of("b")) == 64
    assert artifacts.tree("a") == ["a", "b"]
