"""Runs driven by `start_run`, `resume_run` and `fork_run`: each is driven by the core API
(`Project.run`, `resume`, `fork`) in a thread of its own in the server process, so every other
tool keeps answering while it goes.

The project gate (one project operation at a time: python sources are imported once, the lock
has one writer) is held only while the run starts (validation, the gate, opening sources) and
released the moment the run is stored. A store-level request to stop a run reaches these runs
like any other, since they are ordinary `Project.run` calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wfops.crashlog import report_crash
from wfops.errors import WfopsError

POLL_SECONDS = 0.1


@dataclass
class _Driven:
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None   # what ended the driving thread, if not the run itself


class Board:
    def __init__(self, project: Any, gate: threading.Lock, tidy: Callable[[], None]) -> None:
        self.project = project
        self.gate = gate
        self.tidy = tidy             # flushes stray output of project code after each run
        self._driven: dict[str, _Driven] = {}

    def start(self, label: str, begin: Callable[[Callable[[str], None]], Any]) -> str:
        """The run's id once `begin(on_start)` (a `Project.run`, `resume` or `fork` passing
        `on_start` on) has it stored and going; raises what refused it."""
        started = threading.Event()
        box: dict[str, Any] = {}

        def on_start(run_id: str) -> None:
            box["run_id"] = run_id
            self._driven[run_id] = _Driven()
            self.gate.release()
            box["released"] = True
            started.set()

        def drive() -> None:
            self.gate.acquire()
            try:
                begin(on_start)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller or kept for wait_run
                box["error"] = exc
                if "run_id" in box:
                    self._driven[box["run_id"]].error = exc
                    if not isinstance(exc, WfopsError | SystemExit | KeyboardInterrupt):
                        self._report(exc)
            finally:
                if not box.get("released"):
                    self.gate.release()
                self.tidy()
                if "run_id" in box:
                    self._driven[box["run_id"]].done.set()
                started.set()

        threading.Thread(target=drive, name=f"wfops-run-{label}", daemon=True).start()
        started.wait()
        if "run_id" not in box:
            error = box.get("error")
            if isinstance(error, SystemExit):
                raise WfopsError(f"project code called exit({error.code!r}) while wfops loaded it",
                                 hint="a python source module must not call sys.exit() when imported")
            raise error if isinstance(error, Exception) else WfopsError("the run did not start")
        return str(box["run_id"])

    def wait(self, run_id: str, timeout: float) -> tuple[Any, bool, BaseException | None]:
        """(the run, whether it has stopped, what crashed its driver) after at most `timeout` s."""
        run = self.project.get_run(run_id)  # an unknown id is an error at once
        driven = self._driven.get(run_id)
        if driven is not None:
            driven.done.wait(timeout)
            return self.project.get_run(run_id), driven.done.is_set(), driven.error
        deadline = time.monotonic() + timeout
        while run.status == "running" and not run.orphaned and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            run = self.project.get_run(run_id)
        return run, run.status != "running" or run.orphaned, None

    def going(self) -> list[str]:
        return [rid for rid, d in self._driven.items() if not d.done.is_set()]

    @staticmethod
    def _report(exc: BaseException) -> None:
        if isinstance(exc, Exception):
            report_crash(exc)
