"""The direct `validate` route parses exactly like typer, and leaves everything else to it."""

from __future__ import annotations

import pytest

from wfops.cli.validate_fast import parse


@pytest.mark.parametrize("argv, expected", [
    (["validate"], {"paths": [], "format": "text", "project": None}),
    (["validate", "a.yaml", "--format", "json", "b.yaml"], {"paths": ["a.yaml", "b.yaml"], "format": "json",
                                                             "project": None}),
    (["validate", "-f", "github", "--project=/p"], {"paths": [], "format": "github", "project": "/p"}),
    (["validate", "--format=sarif", "--project", "x"], {"paths": [], "format": "sarif", "project": "x"}),
])
def test_plain_forms_are_parsed(argv, expected) -> None:
    assert parse(argv) == expected


@pytest.mark.parametrize("argv", [["validate", "--help"], ["validate", "-h"], ["validate", "--format"],
                                  ["validate", "-fjson"], ["validate", "--bogus"], ["compile"], []])
def test_everything_else_goes_to_typer(argv) -> None:
    assert parse(argv) is None


def test_help_still_works(capsys) -> None:
    from wfops.cli.main import main

    try:
        main(["validate", "--help"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    assert "--format" in capsys.readouterr().out


def test_missing_option_value_is_typers_usage_error(capsys) -> None:
    from wfops.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["validate", "--format"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("wfops: error:")
