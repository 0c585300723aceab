"""The shared SQL is written once in SQLite's spelling; PostgreSQL's is derived from it."""

from __future__ import annotations

import dataclasses
import re

from wfops.store.queries import POSTGRES, SQLITE, clamp, queries


def test_postgres_spelling_of_parameters_keeps_casts_and_escapes_percent() -> None:
    text = "SELECT a::bigint FROM t WHERE b=? AND c=:name AND d LIKE 'x%'"
    assert POSTGRES.sql(text) == "SELECT a::bigint FROM t WHERE b=%s AND c=%(name)s AND d LIKE 'x%%'"
    assert SQLITE.sql(text) == text


def test_insert_ignore_in_each_dialect() -> None:
    assert SQLITE.insert_ignore("INTO t VALUES (?, ?)") == "INSERT OR IGNORE INTO t VALUES (?, ?)"
    assert POSTGRES.insert_ignore("INTO t VALUES (?, ?)") == "INSERT INTO t VALUES (%s, %s) ON CONFLICT DO NOTHING"


def test_every_statement_takes_the_same_parameters_in_both_dialects() -> None:
    lite, pg = queries(SQLITE), queries(POSTGRES)
    for field in dataclasses.fields(lite):
        if field.name == "dialect":
            continue
        a, b = getattr(lite, field.name), getattr(pg, field.name)
        assert "?" not in b and not re.search(r"(?<![:\w]):\w", b), field.name
        assert a.count("?") == b.count("%s"), field.name
        assert re.findall(r"(?<![:\w]):(\w+)", a) == re.findall(r"%\((\w+)\)s", b), field.name


def test_clamp_keeps_numbers_in_64_bits() -> None:
    assert clamp(2**70) == 2**63 - 1
    assert clamp(-(2**70)) == -(2**63)
    assert clamp(5) == 5
