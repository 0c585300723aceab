"""A real Dask cluster of worker processes, shared by a test module (starting one costs seconds).

The scheduler is told `allowed-failures: 0`, as docs/distributed.md advises: a task whose
worker dies comes back to wfops at once as a failed attempt, and the step's retry policy
decides what happens next (Dask's default would rerun it itself first).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                     dashboard_address=None) as found:
        yield found
