"""The user docs stay true: every CLI command documented, every relative link resolving,
the README's set-up commands exactly as promised, and the examples' schema headers resolvable."""

from __future__ import annotations

import re

import pytest

from tests.everyday.helpers import REPO

MY_DOCS = ["README.md", "docs/file-format.md", "docs/python-sources.md", "docs/trust-model.md",
           "docs/overview.md", "docs/getting-started.md", "docs/examples.md", "docs/testing.md"]


def cli_commands() -> list[str]:
    from typer.main import get_command

    from wfops.cli.main import app

    root = get_command(app)
    found = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        found += [f"wfops {name} {sub}" for sub in subs] if subs else [f"wfops {name}"]
    return found


def test_every_command_is_in_the_readme_cli_table() -> None:
    table = REPO.joinpath("README.md").read_text().split("## The CLI", 1)[1].split("\n## ", 1)[0]
    missing = [c for c in cli_commands() if f"`{c}" not in table and f"/ `{c}" not in table]
    assert missing == []


def test_readme_keeps_the_two_setup_commands() -> None:
    text = REPO.joinpath("README.md").read_text()
    assert "python3 -m pip install -e . && wfops run meeting-report.local\n" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest\n" in text


@pytest.mark.parametrize("doc", MY_DOCS)
def test_relative_links_resolve(doc: str) -> None:
    path = REPO / doc
    broken = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if "://" in target:
            continue
        if not (path.parent / target).exists():
            broken.append(target)
    assert broken == [], f"{doc} links to missing files"


def test_example_files_point_at_existing_schemas() -> None:
    files = [REPO / "sources.yaml", *REPO.glob("workflows/*.yaml"), *REPO.glob("deployments/*.yaml")]
    for path in files:
        first = path.read_text().splitlines()[0]
        if not first.startswith("# yaml-language-server: $schema="):
            continue
        assert (path.parent / first.split("=", 1)[1]).is_file(), path
    mine = ["workflows/meeting-report.yaml", "workflows/approval.yaml", "workflows/fanout.yaml",
            "workflows/greet-one.yaml", "deployments/meeting-report.local.yaml", "sources.yaml"]
    for rel in mine:
        assert (REPO / rel).read_text().startswith("# yaml-language-server: $schema="), rel


def test_file_format_doc_mentions_every_key_of_every_model() -> None:
    from wfops.model import deployment, sources, workflow

    models = [workflow.Workflow, workflow.Retry, workflow.Catch, *workflow.STEP_KINDS.values(),
              sources.PythonSource, sources.McpSource, sources.SourcesFile, deployment.Deployment]
    text = REPO.joinpath("docs/file-format.md").read_text()
    missing = []
    for model in models:
        for name, field in model.model_fields.items():
            key = field.alias or name
            if f"`{key}`" not in text and f"{key}:" not in text:
                missing.append(f"{model.__name__}.{key}")
    for reducer in workflow.REDUCERS:
        if f"`{reducer}`" not in text:
            missing.append(f"reducer {reducer}")
    for operator in workflow.CONDITION_OPERATORS:
        if f"`{operator}`" not in text and f"{{{operator}:" not in text:
            missing.append(f"operator {operator}")
    assert missing == []
