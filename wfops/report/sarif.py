"""SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

File paths stay relative (to `%SRCROOT%`, the project root) so results map onto
the repository wherever it is checked out.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, TextIO
from urllib.parse import quote

from wfops import REPOSITORY, __version__
from wfops.codes import summary
from wfops.diagnostics import Diagnostic

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
DOCS = f"{REPOSITORY}/blob/v{__version__}/docs/diagnostics.md"


def rule(code: str, level: str) -> dict[str, Any]:
    """A reportingDescriptor as GitHub code scanning ingests it (the SARIF Multitool's GitHub
    rules): `fullDescription` and `help` present, a `name` that is a friendly PascalCase
    name rather than the id repeated, the explanation one link away."""
    what = summary(code) or f"wfops check `{code}`"
    return {
        "id": code,
        "name": "".join(part.capitalize() for part in code.split("-")),  # a friendly name: UnknownTarget
        "shortDescription": {"text": what},
        "fullDescription": {"text": f"wfops reports `{code}` for {what}."},
        "help": {
            "text": f"{what}. Each diagnostic's message says what is wrong and its hint how to fix "
                    f"it; every code is explained in docs/diagnostics.md: {DOCS}",
            "markdown": f"**`{code}`**: {what}. Each diagnostic's message says what is wrong and its "
                        f"hint how to fix it; see [docs/diagnostics.md]({DOCS}).",
        },
        "helpUri": DOCS,
        "defaultConfiguration": {"level": level},
    }


def artifact_location(file: str) -> dict[str, str]:
    if PurePosixPath(file).is_absolute() or PureWindowsPath(file).is_absolute():
        return {"uri": Path(file).as_uri()}
    return {"uri": quote(file.replace("\\", "/"), safe="/"), "uriBaseId": "%SRCROOT%"}


def as_data(diagnostics: list[Diagnostic]) -> dict[str, Any]:
    rule_index: dict[str, int] = {}
    rules: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for d in diagnostics:
        if d.code not in rule_index:
            rule_index[d.code] = len(rules)
            rules.append(rule(d.code, _LEVEL.get(d.severity, "note")))
        text = d.message + (f"\nhint: {d.hint}" if d.hint else "")
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": rule_index[d.code],
            "level": _LEVEL.get(d.severity, "note"),
            "message": {"text": text},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": artifact_location(d.file),
                    "region": {"startLine": max(1, d.line), "startColumn": max(1, d.column)},
                },
            }],
        }
        subject = d.subject()
        if subject:  # what the finding is about: workflow, deployment, source, step
            result["properties"] = subject
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "wfops",
                "version": __version__,
                "informationUri": REPOSITORY,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render(diagnostics: list[Diagnostic], stream: TextIO) -> None:
    stream.write(json.dumps(as_data(diagnostics), indent=2, ensure_ascii=False) + "\n")
