"""Count the words and lines of a text file of the project (the `scripts.wordcount` capability).

Run by wfops as `python examples/scripts/wordcount.py PATH` (a `kind: command` source): it
prints one JSON object, and exits 3 when the file holds no words (the `empty` outcome).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    root = Path.cwd().resolve()
    path = (root / sys.argv[1]).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        print(f"{sys.argv[1]}: not a file of the project", file=sys.stderr)
        return 2
    text = path.read_text(encoding="utf-8")
    words = len(text.split())
    if words == 0:
        return 3
    print(json.dumps({"words": words, "lines": len(text.splitlines())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
