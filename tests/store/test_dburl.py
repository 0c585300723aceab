"""Store locations and the one password redactor."""

from __future__ import annotations

from pathlib import Path

import pytest

from wfops.dburl import display, is_url, location_of, redact
from wfops.errors import StoreError
from wfops.store import open_store


@pytest.mark.parametrize(("text", "hidden"), [
    ("postgresql://ana:pw%40x@db.example/runs", "postgresql://ana:***@db.example/runs"),
    ("postgres://ana:p:w@db/runs?sslmode=require", "postgres://ana:***@db/runs?sslmode=require"),
    ("postgresql:///runs?host=/s&password=pw%40x&user=ana", "postgresql:///runs?host=/s&password=***&user=ana"),
    ("host=db password='p w\\'x' user=ana", "host=db password=*** user=ana"),
    ("postgresql://ana@db/runs", "postgresql://ana@db/runs"),
])
def test_redact_hides_every_spelling_of_a_password(text: str, hidden: str) -> None:
    assert redact(text) == hidden
    assert "pw" not in display(text) if is_url(text) else True


def test_redact_hides_the_password_echoed_verbatim() -> None:
    url = "postgresql://ana:pw%40x@db/runs"
    assert redact("server said: bad thing near pw@x and pw%40x", url) == "server said: bad thing near *** and ***"


def test_locations() -> None:
    assert location_of("postgresql://h/db") == "postgresql://h/db"
    assert location_of("POSTGRES://h/db") == "POSTGRES://h/db"
    assert location_of("runs/wfops.db") == Path("runs/wfops.db")
    assert not is_url(Path("postgresql:/h/db"))


@pytest.mark.parametrize("url", ["postgresql://ana:pw-SECRET-1@db:notaport/runs",
                                 "postgresql://ana:pw-SECRET-1@/runs?host=/nowhere&sslmode=bogus",
                                 "postgresql://ana:pw-SECRET-1@/runs?host=/nowhere&nonsense=1"])
def test_malformed_urls_fail_without_the_password(url: str) -> None:
    with pytest.raises(StoreError) as caught:
        open_store(url, timeout=2)
    assert "pw-SECRET-1" not in caught.value.message + str(caught.value.hint)
    assert "***" in caught.value.message


def test_a_url_in_db_or_wfops_db_stays_a_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wfops.loader.project import project_db_path

    url = "postgresql://ana@db.example/runs?sslmode=require"
    assert project_db_path(tmp_path, url) == url  # a Path would fold `//` into `/`
    monkeypatch.setenv("WFOPS_DB", url)
    assert project_db_path(tmp_path) == url
    assert project_db_path(tmp_path, "elsewhere.db") == Path("elsewhere.db")
