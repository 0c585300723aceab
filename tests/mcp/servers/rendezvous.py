"""The stateful test server, started only once its partner has started too.

Run as `python tests/mcp/servers/rendezvous.py ME PARTNER FOLDER`. It notes
`FOLDER/ME.started`, waits for `FOLDER/PARTNER.started`, then serves. Two sources
opened one after the other never both start: the first waits for its partner until
the client's start timeout refuses the run.
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

me, partner, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
(folder / f"{me}.started").write_text("started\n", encoding="utf-8")
deadline = time.monotonic() + 60
while not (folder / f"{partner}.started").exists():
    if time.monotonic() > deadline:
        sys.exit(f"{partner} never started")
    time.sleep(0.05)
stateful = Path(__file__).with_name("stateful.py")
sys.argv = [str(stateful)]
runpy.run_path(str(stateful), run_name="__main__")
