"""wfops.lock: read, build and compare the committed lock file (see docs/lock-and-drift.md)."""
