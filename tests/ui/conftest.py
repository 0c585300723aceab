"""A real `wfops ui` process on a loopback port, and a real headless Chromium driven by
Playwright (Debian's `chromium`: no browser download). Where either is missing the browser
tests skip, except in CI (`CI` set), where .ci/run installs both and a skip would hide them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.harness import WFOPS, CliResult, finishes, process_env, run_cli
from tests.ui import project as ui_project

CHROMIUM = os.environ.get("WFOPS_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "ui"


def _absent(why: str) -> None:
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{why}; CI must run the browser tests (.ci/run installs chromium and playwright)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped, not session-scoped: while Playwright's sync API is open, this thread
    has a running event loop, and `Project.run` refuses to be called from one; so the
    browser must be gone before another module's tests run here."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _absent("playwright is not installed")
    if not Path(CHROMIUM).exists():
        _absent(f"no chromium at {CHROMIUM}")
    with sync_playwright() as p:
        found = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield found
        found.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Europe/Lisbon")
    found = context.new_page()
    found.set_default_timeout(30_000)
    errors: list[str] = []
    found.on("pageerror", lambda exc: errors.append(str(exc)))
    found.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield found
    context.close()
    # A script error or a CSP violation shows in the console: none is expected (an action the
    # server refuses answers 4xx on purpose; a page left open after its server stopped cannot connect).
    assert not [e for e in errors if "status of 4" not in e and "ERR_CONNECTION_REFUSED" not in e], errors


@pytest.fixture
def ui_root(tmp_path: Path) -> Path:
    return ui_project.make(tmp_path / "proj")


def wfops(root: Path, *args: str, env: dict[str, str | None] | None = None, check: bool = True) -> CliResult:
    """`wfops ARGS` in `root`, in process (the runs the pages show, the CLI's own refusals), on a
    thread of its own: while Playwright's sync API is open this thread has a running event loop,
    and a run is not driven from inside one."""
    done = finishes(lambda: run_cli(*args, cwd=root, env=env), guard=120)
    if check:
        assert done.returncode in (0, 1, 3), (args, done.stdout, done.stderr)
    return done


@contextmanager
def serving(root: Path, *args: str, env: dict[str, str | None] | None = None) -> Iterator[str]:
    """`wfops ui --port 0 ARGS` in `root` until the block ends; its address."""
    proc = subprocess.Popen([*WFOPS, "ui", "--port", "0", *args], cwd=root, env=process_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://\S+/", line)
        if found is None:
            proc.kill()
            raise AssertionError(f"wfops ui did not start: {line}{proc.communicate(timeout=30)}")
        yield found.group(0)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def serve() -> Callable[..., Any]:
    return serving


def run_id(done: CliResult | subprocess.CompletedProcess[str]) -> str:
    import json

    return str(json.loads(done.stdout)["run_id"])


def python() -> str:
    return sys.executable
