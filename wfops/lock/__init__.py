"""wfops.lock: read, build and compare the committed lock file (SPEC §6)."""
