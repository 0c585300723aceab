"""wfops's SARIF through Microsoft's SARIF Multitool (`validate --rule-kind "Sarif;Gh"`:
the SARIF rules and GitHub code scanning's ingestion rules) and against the official
SARIF 2.1.0 JSON schema the Multitool ships.

`.ci/run` installs the Multitool (npm `@microsoft/sarif-multitool-linux`) into
`.ci/tools/`; `SARIF_MULTITOOL` may name another copy of its `Sarif.Multitool` binary.
In CI (`CI` set) a missing Multitool fails the test instead of skipping it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.harness import REPO, run_cli

pytestmark = pytest.mark.slow

PACKAGE = REPO / ".ci/tools/node_modules/@microsoft/sarif-multitool-linux"


def multitool() -> Path:
    found = Path(os.environ.get("SARIF_MULTITOOL") or PACKAGE / "Sarif.Multitool")
    if not found.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the SARIF Multitool is missing at {found}: `.ci/run` installs it")
        pytest.skip("needs the SARIF Multitool (npm install --prefix .ci/tools @microsoft/sarif-multitool-linux)")
    return found


def broken_project(tmp_path: Path) -> Path:
    assert run_cli("init", str(tmp_path / "p")).code == 0
    workflow = tmp_path / "p/workflows/hello.yaml"
    # Two findings of two rules: a route to no step, a key the deployment format does not have.
    workflow.write_text(workflow.read_text().replace("next: decorate", "next: nowhere"))
    deployment = tmp_path / "p/deployments/hello.local.yaml"
    deployment.write_text(deployment.read_text() + "colour: red\n")
    return tmp_path / "p"


def test_sarif_passes_the_multitool_github_rules_and_the_official_schema(tmp_path: Path) -> None:
    import jsonschema

    tool = multitool()
    out = run_cli("validate", "--format", "sarif", cwd=broken_project(tmp_path))
    assert out.code == 1
    log = json.loads(out.stdout)
    assert {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]} == {"unknown-target", "unknown-key"}
    sarif = tmp_path / "wfops.sarif"
    sarif.write_text(out.stdout, encoding="utf-8")

    schema = json.loads((tool.parent / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    validator = jsonschema.validators.validator_for(schema)
    validator(schema, format_checker=validator.FORMAT_CHECKER).validate(log)

    findings = check(tool, sarif, tmp_path / "multitool.sarif")
    serious = [f"{f['ruleId']}: {f['message'].get('text') or f['message']}" for f in findings
               if f.get("level", "warning") in ("error", "warning")]
    assert serious == []
    assert "SARIF2012" not in {f["ruleId"] for f in findings}  # rules carry a friendly name

    # The control: the same log as wfops wrote it before, and the Multitool flags it.
    driver = log["runs"][0]["tool"]["driver"]
    del driver["informationUri"]
    for rule in driver["rules"]:
        rule["name"] = rule["id"]
        del rule["fullDescription"], rule["help"]
    sarif.write_text(json.dumps(log), encoding="utf-8")
    flagged = {f["ruleId"] for f in check(tool, sarif, tmp_path / "control.sarif")}
    assert {"GH2012", "SARIF1001", "SARIF2005"} <= flagged


def check(tool: Path, sarif: Path, report: Path) -> list[dict[str, Any]]:
    """The Multitool's findings on `sarif` (its own report is SARIF too)."""
    proc = subprocess.run([str(tool), "validate", "--rule-kind", "Sarif;Gh", "--level", "Error;Warning;Note",
                           "--output", str(report), str(sarif)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Analysis completed successfully" in proc.stdout, proc.stdout + proc.stderr
    results: list[dict[str, Any]] = json.loads(report.read_text(encoding="utf-8"))["runs"][0]["results"]
    return results
