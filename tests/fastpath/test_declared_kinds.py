"""A run whose deployment calls `kind: openapi` and `kind: command` sources starts from its gate
record, and misses it when something those sources depend on changed.

The record's snapshot covers sources.yaml by content (`base_url`, `argv`), and an OpenAPI
document's or a command script's bytes twice: the snapshot holds them (the sources note them as
consulted), and each rebuilt source's contract pins their sha256 and is compared with the
recorded one (`tests.fastpath.mutations` disables both to see these tests fail). Real `wfops`
processes, a real HTTP service on loopback and a real script (not python: no import covers it);
what a process did is read from the modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import process_env
from tests.sources.apiserver import TOKEN, Service, document, serving

pytestmark = pytest.mark.slow

WORKFLOW = """\
name: w
state:
  words: {type: string}
  name: {type: string}
output: {words: $state.words, name: $state.name}
steps:
  - id: count
    uses: scripts.count
    with: {text: "a b c"}
    save: {text: state.words}
    next: lookup
  - id: lookup
    uses: shop.getItem
    with: {item_id: "7"}
    save: {name: state.name}
    on: {ok: end, not_found: end}
"""
COUNT = 'echo "$1" | wc -w\n'

# Runs a command through the console entry point, then says what this process loaded.
PROBE = """
import json, sys
from wfops.cli.main import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def sources(service: Service, *, base_url: str | None = None, argv: str = '[sh, scripts/count.sh, "{text}"]') -> str:
    return f"""\
sources:
  shop:
    kind: openapi
    spec: api/shop.openapi.yaml
    base_url: {base_url or service.base_url}
    headers: {{Authorization: "Bearer ${{SHOP_TOKEN}}"}}
    operations: [getItem]
  scripts:
    kind: command
    capabilities:
      count:
        argv: {argv}
        input: {{type: object, required: [text], properties: {{text: {{type: string}}}}}}
        output: {{type: object, required: [text], properties: {{text: {{type: string}}}}}}
"""


@dataclass
class Done:
    code: int
    out: str
    err: str
    modules: set[str]

    @property
    def gate_hit(self) -> bool:
        """The run started from its gate record: the checks were never imported."""
        return "wfops.fastpath.gate" in self.modules and "wfops.compiler.validate" not in self.modules


def wfops(root: Path, *args: str) -> Done:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=root, env=process_env({"SHOP_TOKEN": TOKEN}),
                          capture_output=True, text=True, timeout=180, check=False)
    *out, last = done.stdout.splitlines() or [""]
    try:
        probe = json.loads(last)
    except ValueError:
        raise AssertionError(f"wfops {args} crashed: {done.stderr}") from None
    return Done(probe["code"], "\n".join(out), done.stderr, set(probe["modules"]))


@pytest.fixture
def service() -> Iterator[Service]:
    with serving() as running:
        yield running


@pytest.fixture
def root(tmp_path: Path, service: Service) -> Path:
    made = write(tmp_path / "p", {"sources.yaml": sources(service), "api/shop.openapi.yaml": document("3.1"),
                                  "scripts/count.sh": COUNT, "workflows/w.yaml": WORKFLOW,
                                  "deployments/d.yaml": "name: d\nworkflow: w\nsecrets: [SHOP_TOKEN]\n"})
    compiled = wfops(made, "compile")
    assert compiled.code == 0, compiled.out + compiled.err
    return made


def test_a_run_of_openapi_and_command_sources_starts_from_its_record(root: Path, service: Service) -> None:
    for _ in range(2):  # compile left the record; the run after a run reads it again
        run = wfops(root, "run", "d", "--json")
        assert run.code == 0, run.err
        assert json.loads(run.out)["output"] == {"words": "3\n", "name": "lamp"}
        assert run.gate_hit, "the run checked everything again"
    assert [seen.path for seen in service.seen] == ["/v1/items/7", "/v1/items/7"]


CHANGES = {
    "the command's script edited": lambda root, service: (root / "scripts/count.sh").write_text("# words\n" + COUNT),
    "the OpenAPI document edited": lambda root, service: (root / "api/shop.openapi.yaml").write_text(
        document("3.1") + "# edited\n"),
    "base_url changed": lambda root, service: (root / "sources.yaml").write_text(
        sources(service, base_url=service.base_url.replace("127.0.0.1", "localhost"))),
    "argv changed": lambda root, service: (root / "sources.yaml").write_text(
        sources(service, argv='[sh, scripts/count.sh, "{text}", extra]')),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_that_matters_misses_the_record(root: Path, service: Service, change: str) -> None:
    assert wfops(root, "run", "d").gate_hit
    CHANGES[change](root, service)
    run = wfops(root, "run", "d", "--json")
    assert not run.gate_hit, f"{change}: the run started from a record of what no longer holds"
    if change.startswith("the"):
        # A changed contract: the full gate reports the drift and refuses the run (`drift: fail`).
        assert run.code == 2 and "capability-drift" in run.out + run.err, run.out + run.err
    else:
        assert run.code == 0, run.err
