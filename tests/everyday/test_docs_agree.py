"""The docs agree with the product and with each other: what `output:` accepts, which
MCP servers `compile` starts, what `runs trace` prints, `init`'s exit codes, step ids,
the README set-up, pre-commit's `additional_dependencies`, and the worked examples
printed in full (built in a fresh project from the docs alone)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.everyday.helpers import REPO
from tests.harness import run_cli
from wfops.model.workflow import STEP_ID_PATTERN


def doc(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


def test_output_is_documented_as_a_mapping_as_validate_enforces(make_project) -> None:
    text = doc("docs/file-format.md")
    row = next(line for line in text.splitlines() if line.startswith("| `output` |"))
    assert "Any value" not in row and "A mapping" in row
    assert "(any shape)" not in text
    root = make_project({"workflows/w.yaml": """
        name: w
        version: 1
        output: [$state.x]
        steps: [{id: a, uses: std.format, with: {template: x, values: {}}, next: end}]
        """})
    refused = run_cli("validate", cwd=root)
    assert refused.code == 1 and "workflows/w.yaml:3:" in refused.stdout  # the doc's "refused" holds


def test_compile_starts_only_the_servers_workflows_call_everywhere_it_is_said() -> None:
    for rel in ("README.md", "docs/trust-model.md", "docs/lock-and-drift.md"):
        text = " ".join(doc(rel).split())
        assert "starts every MCP server" not in text and "every MCP source" not in text, rel
        assert "start MCP servers to snapshot" not in text, rel
    assert "`compile` starts the MCP servers some workflow calls" in " ".join(doc("README.md").split())
    trust = next(line for line in doc("docs/trust-model.md").splitlines() if line.startswith("| `wfops compile` |"))
    assert "some workflow calls" in trust


def test_readme_says_what_runs_trace_prints_and_with_json(examples_project: Path, tmp_path: Path) -> None:
    readme = doc("README.md")
    assert "$ wfops runs trace RUN_ID --json  # ... plus each step's input and output" in readme
    db = str(tmp_path / "runs.db")  # not the shared project's store
    run = run_cli("run", "approval.local", "--json", "--db", db, cwd=examples_project).json()
    text = run_cli("runs", "trace", run["run_id"], "--db", db, cwd=examples_project).stdout
    assert "deploy" not in text.lower()  # text does not show the step's input (the request)...
    entries = run_cli("runs", "trace", run["run_id"], "--json", "--db", db, cwd=examples_project).json()
    assert any("input" in e for e in (entries if isinstance(entries, list) else entries["entries"]))


def test_readme_runs_rows_and_init_exit_codes_match_the_commands(tmp_path: Path) -> None:
    table = doc("README.md").split("## The CLI", 1)[1].split("\n## ", 1)[0]
    assert "delete finished runs | 0, 1 |" not in table
    assert "| `wfops runs rm RUN_ID [--force]` | delete one finished run and its trace (`--force`: an " \
           "interrupted or crashed one too) | 0, 1 unknown id, 2 unfinished run, 5 a live driver |" in table
    init_row = next(line for line in table.splitlines() if line.startswith("| `wfops init"))
    assert "2 (would overwrite; a file where a folder goes; DIR is a file)" in init_row
    (tmp_path / "f").write_text("")
    assert run_cli("init", str(tmp_path / "f")).code == 2  # "DIR is a file"
    assert run_cli("init", str(tmp_path / "f" / "sub")).code == 2  # "a file where a folder goes"
    started = doc("docs/getting-started.md")
    assert "exits 1 with one line when it cannot write\nthere (a read-only place, a file where a folder should be)" \
        not in started


def test_step_ids_are_documented_as_the_schema_has_them(make_project) -> None:
    text = " ".join(doc("docs/file-format.md").split())
    assert "(a letter or `_` first, then letters, digits, `_` and `-`" in text
    assert STEP_ID_PATTERN == r"^[A-Za-z_][A-Za-z0-9_-]*$"
    for good, bad in (("fetch-2", "2nd"), ("_retry", "-x")):
        assert re.match(STEP_ID_PATTERN, good) and not re.match(STEP_ID_PATTERN, bad)


def test_readme_setup_names_the_python_version_and_a_virtualenv() -> None:
    readme = doc("README.md")
    setup = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    needed = tomllib.loads(doc("pyproject.toml"))["project"]["requires-python"]
    assert needed == ">=3.11" and "Python 3.11 or newer" in setup
    assert "python3 -m venv .venv && . .venv/bin/activate" in setup
    assert setup.index("python3 -m venv") < setup.index("python3 -m pip install -e . && wfops run")
    assert "wfops --install-completion" in setup


def test_pre_commit_additional_dependencies_are_documented() -> None:
    for rel in ("docs/getting-started.md", "docs/python-sources.md", ".pre-commit-hooks.yaml"):
        assert "additional_dependencies" in doc(rel), rel
    started = doc("docs/getting-started.md")
    snippet = started.split("List those packages in each hook's `additional_dependencies`:", 1)[1]
    block = snippet.split("```yaml\n", 1)[1].split("```", 1)[0]
    hooks = YAML(typ="safe").load(block)["repos"][0]["hooks"]
    assert {h["id"] for h in hooks} == {"wfops-validate", "wfops-check", "wfops-test"}
    assert all(h["additional_dependencies"] for h in hooks)


def test_node_context_project_root_is_documented() -> None:
    assert "`project_root` is the project's root" in " ".join(doc("docs/python-sources.md").split())


EXAMPLES = {"approval": ["workflows/approval.yaml", "deployments/approval.local.yaml", "tests/approval.wftest.yaml"],
            "world-clock": ["workflows/world-clock.yaml", "deployments/world-clock.local.yaml",
                            "tests/world-clock.wftest.yaml"]}


def documented_files() -> dict[str, str]:
    """`path`:\\n\\n```yaml ...``` blocks of docs/examples.md."""
    return dict(re.findall(r"^`([^`\n]+\.yaml)`:\n\n```yaml\n(.*?)^```$", doc("docs/examples.md"), re.S | re.M))


def test_worked_examples_are_in_the_docs_in_full() -> None:
    found = documented_files()
    for files in EXAMPLES.values():
        for rel in files:
            lines = (REPO / rel).read_text(encoding="utf-8").splitlines(keepends=True)
            assert lines[0].startswith("# yaml-language-server: $schema=")
            assert found.get(rel) == "".join(lines[1:]), rel
    clock = YAML(typ="safe").load(doc("docs/examples.md").split("under `sources:`", 1)[1]
                                  .split("```yaml\n", 1)[1].split("```", 1)[0])["clock"]
    declared = YAML(typ="safe").load(doc("sources.yaml"))["sources"]["clock"]
    assert clock == {k: v for k, v in declared.items() if k != "description"}


def build_from_docs(tmp_path: Path, example: str) -> Path:
    assert run_cli("init", str(tmp_path / "mine")).code == 0
    root = tmp_path / "mine"
    found = documented_files()
    for rel in EXAMPLES[example]:
        (root / rel).write_text(found[rel], encoding="utf-8")
    return root


def test_approval_built_from_the_docs_alone_validates_compiles_and_passes_its_tests(tmp_path: Path) -> None:
    root = build_from_docs(tmp_path, "approval")
    for verb in (["validate"], ["compile"], ["test"]):
        done = run_cli(*verb, cwd=root)
        assert done.code == 0, (verb, done.stdout, done.stderr)
    waiting = run_cli("run", "approval.local", "--json", cwd=root)
    assert waiting.code == 3 and waiting.json()["status"] == "interrupted"


@pytest.mark.slow
def test_world_clock_built_from_the_docs_alone_compiles_and_passes_its_tests(tmp_path: Path) -> None:
    root = build_from_docs(tmp_path, "world-clock")
    text = doc("docs/examples.md")
    entry = text.split("under `sources:`", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    sources = root / "sources.yaml"
    sources.write_text(sources.read_text().replace("sources:\n", "sources:\n" + entry, 1))
    for verb in (["validate"], ["compile"], ["test"]):
        done = run_cli(*verb, cwd=root)
        assert done.code == 0, (verb, done.stdout, done.stderr)
