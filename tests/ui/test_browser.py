"""The pages in a real browser (headless Chromium) against a real `wfops ui` process, on a
store of real runs (made in process, but for the live run, a real process)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or, in CI, fails) every test here
    expect = None

from tests.harness import WFOPS, process_env, wait_for
from tests.ui.conftest import SHOTS, run_id, serving, wfops
from wfops.api import Project

# One worker runs them all, one after another: one browser start for the module.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]


def test_the_runs_list_filters_and_counts(ui_root: Path, page: Any) -> None:
    for text in ("one", "two", "three"):
        wfops(ui_root, "run", "echo.local", "-i", f"text={text}", "--json")
    failed = run_id(wfops(ui_root, "run", "boom.local", "--json"))
    wfops(ui_root, "run", "approve.local", "--json")
    with serving(ui_root) as url:
        page.goto(url)
        rows = page.locator("table[aria-label=Runs] tbody tr")
        rows.first.wait_for()
        assert rows.count() == 5
        assert page.locator("[data-status=failed]").inner_text() == "failed: 1"
        assert page.locator("[data-status=completed]").inner_text() == "completed: 3"
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "runs.png"))
        page.select_option("select[name=status]", "failed")
        page.click("button[type=submit]")
        expect(rows).to_have_count(1)
        assert page.locator("tbody tr").get_attribute("data-run") == failed
        assert "status=failed" in page.url  # the filter is in the address: a reload keeps it
        page.select_option("select[name=status]", "")
        page.select_option("select[name=deployment]", "echo.local")
        page.click("button[type=submit]")
        expect(rows).to_have_count(3)
        assert page.locator("[data-status=failed]").inner_text() == "failed: 0"
        # A created-time window after every run: nothing.
        page.fill("input[name=since]", "2099-01-01T00:00")
        page.click("button[type=submit]")
        expect(rows).to_have_count(0)
        assert "No run matches." in page.inner_text("main")
        # Times are shown in the browser's zone, with UTC on hover.
        page.goto(url)
        first = page.locator("tbody tr time").first
        assert first.get_attribute("title").endswith(" UTC")
        # Keyboard only: Tab reaches the run links, Enter opens one.
        for _ in range(60):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.closest('tbody') !== null"):
                break
        target = page.evaluate("document.activeElement.textContent")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/runs/{target}")
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: the table scrolls, the page does not
        page.goto(url)
        rows.first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_a_run_page_shows_its_timeline_graph_and_trace(ui_root: Path, page: Any) -> None:
    failed = run_id(wfops(ui_root, "run", "boom.local", "--json"))
    with serving(ui_root) as url:
        page.goto(f"{url}runs/{failed}")
        page.locator("#trace details").nth(1).wait_for()
        expect(page.locator("#timeline .bar")).to_have_count(2)  # the page may still be drawing: wait for it
        expect(page.locator("#timeline .bar.failed")).to_have_count(1)
        expect(page.locator("#graph .node.taken")).to_have_count(2)  # before, explode: the path taken
        assert page.locator("#graph .node[data-step=end].taken").count() == 0
        assert "kaboom" in page.inner_text("#run-error")
        page.locator("#trace details").nth(1).locator("summary").click()
        assert "error CapabilityError: kaboom" in page.inner_text("#trace details >> nth=1")
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "run.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing wider than the window
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_foreach_items_and_retry_attempts_are_lanes_of_the_timeline(ui_root: Path, page: Any) -> None:
    rid = run_id(wfops(ui_root, "run", "lanes.local", "--json"))
    with serving(ui_root) as url:
        page.goto(f"{url}runs/{rid}")
        expect(page.locator("#timeline .lane")).to_have_count(6)
        assert page.locator("#timeline .lane .name").all_inner_texts() == [
            "each[0]", "each[1]", "each[2]", "each", "shaky · attempt 1", "shaky · attempt 2"]
        assert page.locator("#timeline .bar.retry").count() == 1  # the failed attempt kept
        assert page.locator("#timeline .bar.failed").count() == 1  # the last one, caught
        expect(page.locator("#graph .node.taken")).to_have_count(3)  # each, shaky, end
        SHOTS.mkdir(exist_ok=True)
        page.locator("#timeline").screenshot(path=str(SHOTS / "timeline.png"))


def test_a_live_run_advances_without_reload(ui_root: Path, page: Any) -> None:
    # The server and the page are up before the run starts, so the page sees it early: its
    # first and last steps sleep 3 s, the middle one prints, and the page must show the later
    # steps and the middle one's log arrive.
    with serving(ui_root) as url:
        page.goto(url)
        proc = subprocess.Popen([*WFOPS, "run", "slow.local", "-i", "seconds=3", "--json"], cwd=ui_root,
                                env=process_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            project = Project(ui_root)
            running = wait_for(lambda: project.find_runs(status="running").runs, what="the run to start")[0]
            page.goto(f"{url}runs/{running.run_id}")
            page.locator("#live:text('live')").wait_for()
            page.evaluate("window.__samePage = true")
            seen = page.locator("#trace details").count()
            assert seen < 2  # loaded before the middle step printed: no log of it yet
            # Its printed lines join the Logs section as the run goes, in place.
            expect(page.locator("#logs details.log[data-step=second] .log-text")).to_contain_text(
                "line 0", timeout=60_000)
            expect(page.locator("#trace details")).to_have_count(3, timeout=60_000)
            expect(page.locator(".facts .badge")).to_have_text("completed")
            assert page.evaluate("window.__samePage") is True  # updated in place, never reloaded
            expect(page.locator("#live")).to_have_text("")  # cleared with the last refresh
            assert page.locator("#timeline .bar").count() == 3
        finally:
            proc.communicate(timeout=120)


def test_an_interrupt_answered_through_the_form_resumes_the_run(ui_root: Path, page: Any) -> None:
    waiting = run_id(wfops(ui_root, "run", "approve.local", "--json"))
    with serving(ui_root) as url:
        page.goto(f"{url}runs/{waiting}")
        page.locator("#answer-form").wait_for()
        assert page.locator("#answer-form button").all_inner_texts() == ["approved", "rejected"]
        expect(page.locator("#graph .node.current")).to_have_attribute("data-step", "ask")
        page.fill("#answer-comment", "looks fine")
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "interrupt.png"), full_page=True)
        # `by` left empty: refused with the CLI's own message, and the run still waits.
        page.click("[data-outcome=approved]")
        page.locator("#action-result.error").wait_for()
        cli = wfops(ui_root, "resume", waiting, "--outcome", "approved", "--payload",
                    json.dumps({"comment": "looks fine"}), check=False)
        assert cli.returncode == 2
        assert page.inner_text("#action-result").splitlines()[0] == cli.stderr.splitlines()[0].removeprefix("wfops: ")
        assert Project(ui_root).get_run(waiting).status == "interrupted"
        page.fill("#answer-by", "ana")
        page.click("[data-outcome=approved]")
        page.locator("#action-result.ok").wait_for()
        assert "completed" in page.inner_text("#action-result")
        stored = Project(ui_root).get_run(waiting)
        assert (stored.status, stored.output) == ("completed", {"message": "Approved by ana"})
        expect(page.locator(".facts .badge")).to_have_text("completed")


def test_cancel_and_fork_work(ui_root: Path, page: Any) -> None:
    waiting = run_id(wfops(ui_root, "run", "approve.local", "--json"))
    failed = run_id(wfops(ui_root, "run", "boom.local", "--json"))
    with serving(ui_root) as url:
        page.goto(f"{url}runs/{waiting}")
        page.click("#cancel")
        page.locator("#action-result.ok").wait_for()
        assert Project(ui_root).get_run(waiting).status == "cancelled"

        page.goto(f"{url}runs/{failed}")
        page.locator("#fork summary").click()
        expect(page.locator("#fork-step option")).to_have_count(2)
        page.select_option("#fork-step", "explode")
        page.fill("#fork-input", json.dumps({"message": "second try"}))
        page.click("#fork-submit")
        page.locator("#action-result #new-run").wait_for()
        forked = page.locator("#new-run").get_attribute("href").rsplit("/", 1)[1]
        run = Project(ui_root).get_run(forked)
        assert run.forked_from == {"run_id": failed, "step": "explode"}
        assert run.status == "failed" and run.error is not None and run.error["message"] == "second try"
        page.click("#new-run")
        page.wait_for_url(f"**/runs/{forked}")
        page.locator("#redrive").wait_for()


def test_markup_in_values_and_logs_renders_as_text_and_large_values_fold(ui_root: Path, page: Any) -> None:
    evil = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
    done = wfops(ui_root, "run", "echo.local", "-i", f"text={evil}", "-i", "blob=" + "x" * 5000, "--json")
    rid = run_id(done)
    # A python node's log (it prints `<script>` and the secret), a failure's and a long one.
    secret = {"UI_TEST_TOKEN": "hunter2-correct-horse-battery"}
    said, refused, long = (run_id(wfops(ui_root, "run", "talk.local", "-i", f"n={n}", "--json", env=secret))
                           for n in (2, -1, 30))
    with serving(ui_root) as url:
        page.goto(f"{url}runs/{said}")
        log = page.locator("#logs details.log[data-step=speak]")
        log.locator("pre").wait_for()
        assert log.get_attribute("open") is not None  # a short log shows open
        text = log.locator("pre").inner_text()
        assert text.startswith("printed <script>window.__pwned = 3</script> token=***\nline 0\nline 1\n")
        assert "WARNING talk: said 2 lines" in text and "hunter2" not in page.content()
        assert page.evaluate("window.__pwned") is None and page.locator("main script").count() == 0
        assert log.get_attribute("data-cut") is None and log.locator(".badge.cut").count() == 0
        SHOTS.mkdir(exist_ok=True)
        page.locator("#logs").screenshot(path=str(SHOTS / "logs.png"))
        page.goto(f"{url}runs/{refused}")
        # The traceback, open or folded (whether it starts folded depends on its frame count).
        page.locator("#logs details.log pre").wait_for(state="attached")
        failure = page.locator("#logs details.log pre").text_content() or ""
        assert "Traceback (most recent call last)" in failure and failure.rstrip().endswith("ValueError: refused -1")
        page.goto(f"{url}runs/{long}")
        folded = page.locator("#logs details.log")
        folded.wait_for()
        assert folded.get_attribute("open") is None and "(32 lines)" in folded.locator("summary").inner_text()
        folded.locator("summary").click()
        assert "line 29" in folded.locator("pre").inner_text()

        page.goto(f"{url}runs/{rid}")
        page.locator("#trace details").first.wait_for()
        assert evil in page.inner_text("#run-output")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("main script, main img").count() == 0
        entry = page.locator("#trace details").first
        entry.locator("summary").click()
        fold = entry.locator(".folded").first
        assert "Show the whole value" in fold.inner_text()
        fold.locator("button").click()
        entry.locator("pre:has-text('xxxxxxxxxx')").first.wait_for()
        assert "x" * 5000 in entry.inner_text()


def test_a_read_only_server_offers_and_takes_no_action(ui_root: Path, page: Any) -> None:
    waiting = run_id(wfops(ui_root, "run", "approve.local", "--json"))
    with serving(ui_root, "--read-only") as url:
        page.goto(f"{url}runs/{waiting}")
        page.locator("#trace details").first.wait_for()
        assert page.locator("#answer-form, #cancel").count() == 0
        token = page.get_attribute("meta[name=csrf-token]", "content")
        answer = page.request.post(f"{url}api/runs/{waiting}/cancel", data="{}",
                                   headers={"Content-Type": "application/json", "X-CSRF-Token": token})
        assert answer.status == 403 and "read-only" in answer.json()["error"]
    assert Project(ui_root).get_run(waiting).status == "interrupted"


def test_the_project_page_shows_workflows_deployments_lock_and_catalog(ui_root: Path, page: Any) -> None:
    with serving(ui_root) as url:
        page.goto(f"{url}project")
        page.locator("#check .result.ok").wait_for()
        assert page.locator("[data-deployment]").count() == 7
        assert page.locator("[data-workflow=approve] .graph .node").count() == 4
        nightly = page.locator("[data-deployment='echo.local'] [data-entry=nightly]")
        assert "30 2 * * * (Europe/Berlin)" in nightly.inner_text()
        assert nightly.locator("time").count() == 3
        assert nightly.locator("time").first.get_attribute("title").endswith("01:30:00 UTC")
        page.locator("[data-capability='std.echo']").wait_for()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "project.png"))


def test_the_pages_work_against_the_postgresql_store(ui_root: Path, page: Any, pg_url: str) -> None:
    rid = run_id(wfops(ui_root, "run", "boom.local", "--db", pg_url, "--json"))
    with serving(ui_root, "--db", pg_url) as url:
        page.goto(url)
        page.locator(f"tr[data-run='{rid}']").wait_for()
        page.goto(f"{url}runs/{rid}")
        page.locator("#graph .node.taken").nth(1).wait_for()
        assert page.locator("#timeline .bar.failed").count() == 1
        page.click("#redrive")
        page.locator("#action-result.error, #action-result.ok").wait_for()


def test_a_host_other_than_loopback_is_refused_without_a_token(ui_root: Path) -> None:
    refused = wfops(ui_root, "ui", "--host", "0.0.0.0", "--port", "0", env={"WFOPS_UI_TOKEN": None}, check=False)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        "wfops: error: refusing to serve on 0.0.0.0: a host other than loopback needs a token",
        "  hint: set WFOPS_UI_TOKEN to a long random secret (every request must carry it), or serve on 127.0.0.1"]
    with serving(ui_root, "--host", "0.0.0.0", env={"WFOPS_UI_TOKEN": "s3cret-token"}) as url:
        port = url.rsplit(":", 1)[1].rstrip("/")
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=30)
        assert denied.value.code == 401
        allowed = urllib.request.Request(f"http://127.0.0.1:{port}/api/runs",
                                         headers={"Authorization": "Bearer s3cret-token"})
        with urllib.request.urlopen(allowed, timeout=30) as answer:
            assert json.load(answer)["total"] == 0
