"""The fast paths are taken, and each misses when something its key covers changed.

Four records serve a result without recomputing it: the validate and check replays (`wfops
validate` and `wfops check` print the stored report), the contract record (validate reads the
python sources' contracts without importing them) and the gate record (a run starts from what
the last full gate decided). All are decided by one key, `wfops.fastpath.snapshot`.

Everything here runs real `wfops` processes in a real project whose node returns a model
defined outside the project. What a process did is read from what it left behind, never
from timing:

* the modules a fresh process loaded (`sys.modules` after the command): a replayed validate
  loads no `wfops.api.validate`, a run from its gate record no `wfops.compiler.validate`;
* a marker line the project's python source writes each time it is imported: validate served
  from the contract record does not import it.

Each "change" below leaves every contract as it was (a comment, a version number), so only a
key that covers it can make a record miss: the slow path then gives the same answer, and the
only witness is which path ran.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import write
from tests.harness import REPO, process_env

pytestmark = pytest.mark.slow

SOURCES = "sources:\n  nodes: {kind: python, module: nodes}\n"
NODES = """\
import os
with open(os.environ["WFOPS_TEST_MARKER"], "a") as marker:
    marker.write("imported\\n")
from pydantic import BaseModel
import wfops
from {module} import Out


class In(BaseModel):
    text: str


@wfops.node
def make(payload: In) -> Out:
    \"\"\"Counts.\"\"\"
    return Out(n=1)
"""
OUT_INT = "from pydantic import BaseModel\n\n\nclass Out(BaseModel):\n    n: int\n"
OUT_STR = OUT_INT.replace("n: int", "n: str")
WORKFLOW = "name: w\nstate:\n  n: {type: integer}\nsteps:\n  - id: a\n    uses: nodes.make\n" \
           "    with: {text: x}\n    save: {n: state.n}\n    next: end\n"
DEPLOYMENT = "name: d\nworkflow: w\n"

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


@dataclass
class Done:
    code: int
    out: str
    err: str
    modules: set[str]


@dataclass
class World:
    """A project, the folder outside it on PYTHONPATH, a venv, and the environment to run in."""

    root: Path
    outside: Path
    venv: Path
    marker: Path
    env: dict[str, str]

    def wfops(self, *args: str) -> Done:
        done = subprocess.run([str(self.python), "-c", PROBE, *args], cwd=self.root, env=self.env,
                              capture_output=True, text=True, timeout=180)
        *out, last = done.stdout.splitlines() or [""]
        try:
            probe = json.loads(last)
        except ValueError:
            raise AssertionError(f"wfops {args} crashed: {done.stderr}") from None
        return Done(probe["code"], "\n".join(out), done.stderr, set(probe["modules"]))

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def site(self) -> Path:
        return next((self.venv / "lib").glob("python3*/site-packages"))

    def imports(self) -> int:
        return len(self.marker.read_text(encoding="utf-8").splitlines()) if self.marker.exists() else 0

    def pip_install(self, wheel: Path) -> None:
        """A real `pip install -U` into the venv, from a local wheel (no index, no build)."""
        done = subprocess.run([sys.executable, "-m", "pip", "--python", str(self.python), "install", "--quiet",
                               "--no-deps", "--no-index", "--no-build-isolation", "--upgrade", str(wheel)],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr


def tiny_wheel(folder: Path, version: str, module: str) -> Path:
    """A real wheel of a one-module distribution `tinylib` (a zip pip installs without building)."""
    info = f"tinylib-{version}.dist-info"
    files = {"tinylib.py": module,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: tinylib\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: wfops-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}

    def digest(text: str) -> str:
        raw = hashlib.sha256(text.encode()).digest()
        return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    record = "".join(f"{path},{digest(text)},{len(text.encode())}\n" for path, text in files.items())
    files[f"{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"tinylib-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def make_world(tmp_path: Path, module: str, *, tool: Path = REPO) -> World:
    """The project's node returns `module.Out`; `outside/` (beside the project) is on PYTHONPATH;
    a venv that sees the machine's libraries holds what the tests install. `tool`: the wfops
    checkout the processes import."""
    outside = write(tmp_path / "outside", {"extmodels.py": OUT_INT})
    root = write(tmp_path / "proj", {"sources.yaml": SOURCES, "nodes.py": NODES.format(module=module),
                                     "workflows/w.yaml": WORKFLOW, "deployments/d.yaml": DEPLOYMENT})
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    marker = tmp_path / "imports.log"
    env = process_env({"WFOPS_TEST_MARKER": str(marker)})
    env["PYTHONPATH"] = os.pathsep.join([str(tool), str(outside)])
    return World(root, outside, venv, marker, env)


def codes(done: Done) -> list[str]:
    return [d["code"] for d in json.loads(done.out)["diagnostics"]]


def warm(world: World) -> None:
    """compile (records the gate), validate and check (record with the lock), run, as a user's project has."""
    assert world.wfops("compile").code == 0
    assert world.wfops("validate").code == 0
    assert world.wfops("check").code == 0
    first = world.wfops("run", "d", "--json")
    assert first.code == 0, first.err
    assert gate_hit(first)  # compile left the gate record: the first run did not check everything again


def replayed(done: Done) -> bool:
    """The validate replay answered: the API's validate (the checks' route) was never imported."""
    return "wfops.fastpath.replay" in done.modules and "wfops.api.validate" not in done.modules


def check_replayed(done: Done) -> bool:
    """The check replay answered: the lock's checks (and so the python sources) were never imported."""
    return "wfops.fastpath.replay" in done.modules and "wfops.lock.check" not in done.modules


def gate_hit(done: Done) -> bool:
    """The run started from its gate record: the checks were never imported."""
    return "wfops.fastpath.gate" in done.modules and "wfops.compiler.validate" not in done.modules


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = make_world(tmp_path, "extmodels")
    warm(world)
    return world


def test_a_file_made_beside_the_checkout_misses_no_record(world: World) -> None:
    # wfops' checkout is on the processes' path; its folder's mtime moves with any file made
    # there (a test run's coverage data, say), which installs nothing: the records still hold.
    stray = REPO / f".stray-{os.getpid()}"
    stray.write_text("not a package\n", encoding="utf-8")
    stray.unlink()
    again = world.wfops("run", "d", "--json")
    assert again.code == 0 and gate_hit(again)
    assert replayed(world.wfops("validate"))


def test_each_fast_path_is_taken(world: World) -> None:
    # The gate record: a second run of the unchanged deployment (it imports the source it calls).
    again = world.wfops("run", "d", "--json")
    assert again.code == 0 and gate_hit(again)
    imported = world.imports()
    # The validate replay: the same report, the checks not loaded.
    report = world.wfops("validate", "--format", "json")
    assert report.code == 0 and codes(report) == [] and replayed(report)
    # The check replay: the same report, neither the checks nor the python source loaded.
    checked_again = world.wfops("check", "--format", "json")
    assert checked_again.code == 0 and codes(checked_again) == [] and check_replayed(checked_again)
    assert world.imports() == imported and "pydantic" not in checked_again.modules
    assert world.wfops("check").out.startswith("ok: no problems\nchecked 1 workflow, 1 deployment")
    # `caps list` reads the python contracts from the contract record too.
    listed = world.wfops("caps", "list")
    assert listed.code == 0 and "nodes.make" in listed.out and "Counts" in listed.out
    assert world.imports() == imported and "pydantic" not in listed.modules
    # The contract record: a workflow edit misses the replay; the python source is not imported.
    write(world.root, {"workflows/w.yaml": WORKFLOW + "# reviewed\n"})
    checked = world.wfops("validate", "--format", "json")
    assert checked.code == 0 and codes(checked) == [] and not replayed(checked)
    assert "pydantic" not in checked.modules
    assert world.imports() == imported


def test_a_hit_loads_no_heavy_library(world: World) -> None:
    heavy = {"ruamel", "jsonschema", "mcp", "typer", "click", "watchfiles", "psycopg", "dask", "regex"}
    report = world.wfops("validate")
    assert replayed(report)
    assert {m.split(".")[0] for m in report.modules} & (heavy | {"pydantic", "sqlite3", "_sqlite3"}) == set()
    run = world.wfops("run", "d", "--json")
    assert gate_hit(run)
    assert {m.split(".")[0] for m in run.modules} & heavy == set()


def _edit_outside(world: World) -> None:
    write(world.outside, {"extmodels.py": OUT_INT + "# the same model\n"})


def _edit_project_python(world: World) -> None:
    write(world.root, {"nodes.py": NODES.format(module="extmodels") + "# the same node\n"})


def _install(world: World) -> None:
    world.pip_install(tiny_wheel(world.root.parent / "wheels", "1.0", "VERSION = 1\n"))


def _upgrade(world: World) -> None:
    world.pip_install(tiny_wheel(world.root.parent / "wheels", "2.0", "VERSION = 1\n"))


def _path_entry_added(world: World) -> None:
    extra = world.root.parent / "extra"
    extra.mkdir()
    world.env["PYTHONPATH"] += os.pathsep + str(extra)


CHANGES: dict[str, Callable[[World], None]] = {
    "module outside the project edited": _edit_outside,
    "project python edited": _edit_project_python,
    "distribution installed": _install,
    "python path changed": _path_entry_added,
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_change_the_key_covers_misses_every_record(world: World, change: str) -> None:
    CHANGES[change](world)
    imported = world.imports()
    report = world.wfops("validate", "--format", "json")
    assert report.code == 0 and codes(report) == []
    assert not replayed(report)              # the validate replay missed
    assert world.imports() == imported + 1   # the contract record missed: the source was imported
    checked = world.wfops("check", "--format", "json")
    assert checked.code == 0 and not check_replayed(checked)  # the check replay missed
    run = world.wfops("run", "d", "--json")
    assert run.code == 0, run.err
    assert not gate_hit(run)                 # the gate record missed: the full gate ran


def test_a_distribution_upgraded_misses_every_record(tmp_path: Path) -> None:
    # The node imports a library installed in the venv; `pip install -U` to a version with the
    # same code changes no contract, only the installed distribution.
    world = make_world(tmp_path, "extmodels")
    _install(world)
    write(world.root, {"nodes.py": NODES.format(module="extmodels") + "import tinylib\n"})
    warm(world)
    assert replayed(world.wfops("validate"))
    _upgrade(world)
    imported = world.imports()
    report = world.wfops("validate")
    assert report.code == 0 and not replayed(report) and world.imports() == imported + 1
    assert not gate_hit(world.wfops("run", "d", "--json"))


def test_wfops_code_edited_misses_every_record(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    shutil.copytree(REPO / "wfops", tool / "wfops", ignore=shutil.ignore_patterns("__pycache__"))
    world = make_world(tmp_path, "extmodels", tool=tool)
    warm(world)
    assert replayed(world.wfops("validate"))
    codes_py = tool / "wfops" / "codes.py"
    codes_py.write_text(codes_py.read_text(encoding="utf-8") + "\n# an edit that changes nothing\n", encoding="utf-8")
    imported = world.imports()
    report = world.wfops("validate")
    assert report.code == 0 and not replayed(report) and world.imports() == imported + 1
    assert not gate_hit(world.wfops("run", "d", "--json"))


def test_a_report_made_from_the_contract_record_still_covers_the_modules_it_did_not_import(world: World) -> None:
    # The contracts served unimported: the report stored then depends on what the recorded
    # imports loaded, though this process never loaded it.
    write(world.root, {"workflows/w.yaml": WORKFLOW + "# reviewed\n"})
    imported = world.imports()
    assert "pydantic" not in world.wfops("validate").modules and world.imports() == imported
    write(world.outside, {"extmodels.py": OUT_STR})
    report = world.wfops("validate", "--format", "json")
    assert report.code == 1 and "type-mismatch" in codes(report)


def test_a_model_outside_the_project_changed_is_reported_and_refused(tmp_path: Path) -> None:
    # A module on PYTHONPATH, outside the project, defines what the node returns.
    world = make_world(tmp_path, "extmodels")
    warm(world)
    assert world.wfops("validate").code == 0
    write(world.outside, {"extmodels.py": OUT_STR})
    report = world.wfops("validate", "--format", "json")
    assert report.code == 1 and "type-mismatch" in codes(report)
    checked = world.wfops("check", "--format", "json")
    assert checked.code == 1 and "type-mismatch" in codes(checked)
    refused = world.wfops("run", "d")
    assert refused.code == 2 and "type-mismatch" in refused.err
    assert not gate_hit(refused)


def test_a_library_upgraded_with_a_changed_model_is_reported_and_refused(tmp_path: Path) -> None:
    # `pip install -U` of the library that defines what the node returns.
    world = make_world(tmp_path, "tinylib")
    world.pip_install(tiny_wheel(tmp_path / "wheels", "1.0", OUT_INT))
    warm(world)
    assert world.wfops("validate").code == 0
    world.pip_install(tiny_wheel(tmp_path / "wheels", "2.0", OUT_STR))
    assert (world.site / "tinylib-2.0.dist-info").is_dir() and not (world.site / "tinylib-1.0.dist-info").exists()
    report = world.wfops("validate", "--format", "json")
    assert report.code == 1 and "type-mismatch" in codes(report)
    refused = world.wfops("run", "d")
    assert refused.code == 2 and "type-mismatch" in refused.err
    assert not gate_hit(refused)
