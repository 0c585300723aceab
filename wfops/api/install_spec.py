"""How the scaffold's CI installs wfops: the `pip install` requirement for this very wfops,
read off how it was installed. `wfops init --wfops-spec SPEC` overrides it.

- run from a source checkout (an editable install, or `PYTHONPATH`): the checkout's git
  remote and commit when it has a remote, else the checkout's path;
- installed from git: that URL and commit;
- installed from a local directory or an archive: that path or URL;
- installed from a package index: `wfops==VERSION`.
"""

from __future__ import annotations

import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import wfops
from wfops import __version__

_GIT_TIMEOUT = 10


def install_spec() -> str:
    checkout = _checkout()
    if checkout is not None:
        return _checkout_spec(checkout)
    try:
        direct = metadata.distribution("wfops").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = None
    return _direct_spec(json.loads(direct) if direct else {})


def _checkout() -> Path | None:
    """The source tree this wfops is imported from, when it is one (not site-packages)."""
    root = Path(wfops.__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "wfops" / "__init__.py").is_file() else None


def _checkout_spec(root: Path) -> str:
    remote = _git(root, "remote", "get-url", "origin")
    commit = _git(root, "rev-parse", "HEAD")
    if remote and commit and not remote.startswith(("/", ".", "file:")) and "://" in remote:
        return f"wfops @ git+{remote}@{commit}"
    return f"wfops @ {root.as_uri()}"


def _direct_spec(info: dict[str, Any]) -> str:
    url = str(info.get("url") or "")
    vcs = info.get("vcs_info") or {}
    if vcs.get("vcs") == "git" and vcs.get("commit_id"):
        return f"wfops @ git+{url}@{vcs['commit_id']}"
    if url:  # a local directory (`dir_info`) or an archive (`archive_info`)
        return f"wfops @ {url}"
    return f"wfops=={__version__}"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=_GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
