"""An artifact hash checked from the canonical text of a normalized workflow: the gate record
verifies its workflows this way, so it must be the very hash the lock and the store hold."""

from __future__ import annotations

import hashlib

import pytest

from wfops.canonical import canonical_json, sha256_of
from wfops.compiler.artifact import artifact_hash, text_hash

FORMS = {
    "plain": ({"name": "a", "steps": [{"id": "s", "end": "done"}]}, {}),
    "non-ASCII and escapes": ({"name": "b", "description": "é ☃ \u2028 \n \"q\" \\", "steps": []}, {}),
    "numbers, nulls, nesting": ({"name": "c", "n": 1.5, "t": True, "z": None, "l": [1, {"b": 2, "a": 3}]},
                                {"kid": "h" * 64, "another": "missing"}),
}


@pytest.mark.parametrize("case", FORMS, ids=list(FORMS))
def test_the_hash_of_the_text_is_the_hash_of_the_form(case: str) -> None:
    form, children = FORMS[case]
    # The definition the lock and stored artifacts were built with.
    defined = sha256_of({"workflow": form, "subworkflows": children})
    assert artifact_hash(form, children) == defined
    assert text_hash(canonical_json(form).encode("utf-8"), children) == defined


def test_other_bytes_of_the_same_meaning_do_not_hash_alike() -> None:
    form, children = FORMS["plain"]
    spaced = canonical_json(form).replace(":", ": ").encode("utf-8")
    assert text_hash(spaced, children) != artifact_hash(form, children)
    assert text_hash(canonical_json(form).encode("utf-8"), {"x": "y"}) != artifact_hash(form, children)


def test_the_text_hash_is_plain_sha256_of_the_assembled_document() -> None:
    form, children = FORMS["numbers, nulls, nesting"]
    document = canonical_json({"workflow": form, "subworkflows": children}).encode("utf-8")
    assert text_hash(canonical_json(form).encode("utf-8"), children) == hashlib.sha256(document).hexdigest()
