"""Sources are plugins behind one small protocol (`wfops.sources.base.Source`)."""
