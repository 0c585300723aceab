"""Break each fast path in a scratch copy of the checkout and see a test fail.

    python3 -m tests.fastpath.mutations [NAME ...]

The reviewer's check of `test_taken.py`, as a script: for each mutation below (a fast path
disabled, or its key made to ignore one kind of input), copy the checkout to a temporary
folder, apply the one edit there, run the tests that must catch it, and report whether they
failed. The checkout itself is never edited. Exits 1 when a mutation survives (its tests pass)
or no longer applies (the code it edits moved: update the mutation). A few minutes on 2 cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TAKEN = "tests/fastpath/test_taken.py"
DECLARED = "tests/fastpath/test_declared_kinds.py"
SNAPSHOT = "wfops/fastpath/snapshot.py"
IGNORE_CONSULTED = ('{**snapshot["files"], **snapshot["python"]}', '{**snapshot["files"]}')


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    also: tuple[tuple[str, str, str], ...] = ()  # more (file, old, new) edits: a key covered twice


def _change(name: str) -> str:
    return f"{TAKEN}::test_a_change_the_key_covers_misses_every_record[{name}]"


MUTATIONS = [
    Mutation("validate replay never read", "wfops/fastpath/replay.py",
             "    entry = current_entry(root, record)\n    if entry is None:\n        return None\n    try:\n        rendered",
             "    entry = None\n    if entry is None:\n        return None\n    try:\n        rendered",
             (f"{TAKEN}::test_each_fast_path_is_taken",)),
    Mutation("check replay never tried", "wfops/cli/main.py",
             'elif (call.module, call.function) == ("check_cmd", "run") and not call.kwargs["live"]:',
             'elif False:',
             (f"{TAKEN}::test_each_fast_path_is_taken",)),
    Mutation("contract record never read", "wfops/fastpath/contracts.py",
             'entry = json.loads((self.root / RECORD_FILE).read_text(encoding="utf-8"))', "entry = None",
             (f"{TAKEN}::test_each_fast_path_is_taken",)),
    Mutation("gate record never read", "wfops/fastpath/gate.py",
             "        entry = json.loads(head)\n", '        entry = json.loads(b"{}")\n',
             (f"{TAKEN}::test_each_fast_path_is_taken",)),
    Mutation("validate replay ignores its key", "wfops/fastpath/replay.py",
             'isinstance(entry, dict) and unchanged(root, entry.get("snapshot"))', "isinstance(entry, dict)",
             (_change("module outside the project edited"),)),
    Mutation("contract record ignores its key", "wfops/fastpath/contracts.py",
             "            if not unchanged(self.root, snapshot):", "            if False:",
             (_change("module outside the project edited"),)),
    Mutation("gate record ignores its key", "wfops/fastpath/gate.py",
             ' or not unchanged(root, entry.get("snapshot"))', "",
             (_change("module outside the project edited"),)),
    Mutation("key ignores modules outside the project", "wfops/fastpath/snapshot.py",
             "if any(_stat(file) != identity for file, identity in libraries.items()):", "if False:",
             (_change("module outside the project edited"),
              f"{TAKEN}::test_a_model_outside_the_project_changed_is_reported_and_refused")),
    Mutation("key ignores installed distributions and the python path", "wfops/fastpath/snapshot.py",
             'if snapshot["format"] != FORMAT or snapshot["path"] != import_path(root):',
             'if snapshot["format"] != FORMAT:',
             (_change("distribution installed"), _change("python path changed"))),
    Mutation("key ignores project python", "wfops/fastpath/snapshot.py",
             '{**snapshot["files"], **snapshot["python"]}', '{**snapshot["files"]}',
             (_change("project python edited"),)),
    Mutation("key ignores wfops files", "wfops/fastpath/snapshot.py",
             '{**snapshot["files"], **snapshot["python"]}', '{**snapshot["python"]}',
             (f"{TAKEN}::test_each_fast_path_is_taken",)),
    Mutation("key ignores wfops' own code", "wfops/fastpath/snapshot.py",
             'return bool(snapshot["tool"] == tool_fingerprint())', "return True",
             (f"{TAKEN}::test_wfops_code_edited_misses_every_record",)),
    Mutation("gate record builds no openapi or command source", "wfops/fastpath/gate.py",
             '        elif spec["kind"] in ("openapi", "command"):', "        elif False:",
             (f"{DECLARED}::test_a_run_of_openapi_and_command_sources_starts_from_its_record",)),
    # A script's or a document's bytes are covered twice: the snapshot holds them by content (the
    # source notes them as consulted), and the rebuilt source's contract, pinning their sha256, is
    # compared with the recorded one. Only both ignored lets a stale record through.
    Mutation("gate record ignores a command script's bytes", "wfops/fastpath/gate.py",
             "    if ready.contracts is None:\n        return True", "    if True:\n        return True",
             (f"{DECLARED}::test_a_change_that_matters_misses_the_record[the command's script edited]",),
             also=((SNAPSHOT, *IGNORE_CONSULTED),)),
    Mutation("gate record ignores an OpenAPI document's bytes", "wfops/fastpath/gate.py",
             "    if ready.contracts is None:\n        return True", "    if True:\n        return True",
             (f"{DECLARED}::test_a_change_that_matters_misses_the_record[the OpenAPI document edited]",),
             also=((SNAPSHOT, *IGNORE_CONSULTED),)),
    Mutation("gate record ignores sources.yaml", "wfops/runner/gate_record.py",
             "SOURCES_FILE, LOCK_FILE]", "LOCK_FILE]",
             (f"{DECLARED}::test_a_change_that_matters_misses_the_record[base_url changed]",
              f"{DECLARED}::test_a_change_that_matters_misses_the_record[argv changed]")),
    Mutation("a served contract record forgets the modules its imports loaded", "wfops/fastpath/contracts.py",
             'note_consulted(self.root, snapshot["python"], snapshot["libraries"])',
             'note_consulted(self.root, snapshot["python"])',
             (f"{TAKEN}::test_a_report_made_from_the_contract_record_still_covers_the_modules_it_did_not_import",)),
]

# The control: the same tests on an unedited copy must pass, or a failure proves nothing.
CONTROL = Mutation("control (no edit)", "wfops/fastpath/__init__.py", '"""The fast paths', '"""The fast paths',
                   tuple(dict.fromkeys(t for m in MUTATIONS for t in m.tests)))

_SKIP = shutil.ignore_patterns(".git", ".wfops", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")


def check(mutation: Mutation) -> str:
    """'caught', 'SURVIVED' (the tests passed) or 'STALE' (the edit no longer applies)."""
    with tempfile.TemporaryDirectory(prefix="wfops-mutant-") as scratch:
        copy = Path(scratch) / "repo"
        shutil.copytree(REPO, copy, ignore=_SKIP)
        for file, old, new in ((mutation.file, mutation.old, mutation.new), *mutation.also):
            target = copy / file
            text = target.read_text(encoding="utf-8")
            if text.count(old) != 1:
                return "STALE"
            target.write_text(text.replace(old, new), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-x", "-p", "no:cacheprovider",
                               *mutation.tests], cwd=copy, capture_output=True, text=True,
                              env={**_env(), "PYTHONPATH": str(copy)})
        # 1: tests ran and failed; anything else (an import error, no tests) proves nothing
        return "caught" if done.returncode == 1 else ("SURVIVED" if done.returncode == 0 else
                                                      f"ERROR {done.returncode}: {done.stdout[-500:]}")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def main(names: list[str]) -> int:
    chosen = [m for m in MUTATIONS if not names or m.name in names]
    control = check(CONTROL)
    print(f"{'passes' if control == 'SURVIVED' else control:8}  {CONTROL.name}", flush=True)
    bad = int(control != "SURVIVED")
    for mutation in chosen:
        verdict = check(mutation)
        bad += verdict != "caught"
        print(f"{verdict:8}  {mutation.name}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
