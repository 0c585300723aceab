"""Copy a run history from one store into another (e.g. a local SQLite file into the shared
PostgreSQL store): whole runs, each in one transaction, never twice."""

from __future__ import annotations

from dataclasses import dataclass, field

from wfops.store.protocol import Store

_ALL = 2**63 - 1


@dataclass
class Copied:
    copied: list[str] = field(default_factory=list)   # run ids written to the target
    present: list[str] = field(default_factory=list)  # already in the target: left as they are
    busy: list[str] = field(default_factory=list)     # driven by a live process right now: not copied


def copy_runs(source: Store, target: Store) -> Copied:
    """Copy every run of `source` that `target` lacks, oldest first.

    A run some process is driving is skipped (its trace is still growing); a run of an
    id the target holds already is left alone, so copying twice adds nothing."""
    done = Copied()
    for run in reversed(source.list_runs(limit=_ALL)):
        run_id = run.snapshot.run_id
        if run.snapshot.status == "running" and source.run_is_driven(run_id):
            done.busy.append(run_id)
            continue
        wrote = target.import_run(run, source.trace(run_id), source.run_workflows(run_id))
        (done.copied if wrote else done.present).append(run_id)
    return done
