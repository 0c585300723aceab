"""Running deployments: `run_deployment`, `resume_run` (async) and their options.

    from wfops.runner import RunOptions, run_deployment
    result = await run_deployment(RunOptions("meeting-report.local", input={"path": "x.md"}))
    result.snapshot.to_public()
"""

from __future__ import annotations

from wfops.runner.execute import (
    ForkOptions,
    ResumeOptions,
    RunOptions,
    RunResult,
    fork_run,
    resume_run,
    run_deployment,
)

__all__ = ["ForkOptions", "ResumeOptions", "RunOptions", "RunResult", "fork_run", "resume_run", "run_deployment"]
