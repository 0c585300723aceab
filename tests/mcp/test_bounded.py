"""The one size limit of `wfops mcp` results: largest values cut first, each cut listed."""

from __future__ import annotations

import json

import pytest

from wfops.mcpserver.bounded import CUT_MARK, TooLarge, bound, page, size_of


def test_a_small_result_is_untouched() -> None:
    data = {"ok": True, "run": {"output": {"x": 1}}}
    assert bound(json.loads(json.dumps(data)), 4096) == (data, [])


def test_the_largest_values_are_cut_first_and_each_cut_says_where_and_how_to_get_it() -> None:
    data = {"ok": True, "run": {"output": {"big": "x" * 50_000}, "error": {"message": "m" * 20_000}},
            "note": "small"}
    out, cuts = bound(data, 8192, lambda pointer, value: {"tool": "show_run", "arguments": {"value": pointer}})
    assert size_of(out) + size_of(cuts) <= 8192
    assert [c["path"] for c in cuts] == ["/run/output", "/run/error/message"]
    assert out["run"]["output"]["$cut"] is True and out["run"]["output"]["chars"] == cuts[0]["chars"]
    assert out["run"]["error"]["message"].endswith(CUT_MARK)  # a string stays a string
    assert cuts[0]["get"] == {"tool": "show_run", "arguments": {"value": "/run/output"}}
    assert out["note"] == "small"


def test_too_many_small_values_is_a_clear_failure() -> None:
    with pytest.raises(TooLarge):
        bound({"runs": [{"id": i} for i in range(5000)]}, 4096)


def test_pages_cover_the_text_exactly() -> None:
    text = json.dumps("é\n" * 30_000)
    pieces, offset = [], 0
    while offset is not None:
        chunk, offset_next = page(text, offset, 8192)
        assert size_of(chunk) <= 8192
        pieces.append(chunk)
        offset = offset_next
    assert "".join(pieces) == text
