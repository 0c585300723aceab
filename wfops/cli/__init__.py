"""The command-line face. `main.py` parses; each `<verb>_cmd.py` does one verb and returns an exit code."""
