"""The SQLite nullability proof (origins.py) makes no wrong claim: a seeded random sweep of
selects (joins inner and outer, filters, ordering, grouping, aggregates, subqueries, compounds,
literals, expressions) over tables whose nullable columns hold NULLs, each statement run for
real and every column the proof calls non-null checked to hold no NULL. Plain selects of NOT
NULL columns are proved (the proof is not vacuous)."""

from __future__ import annotations

import random
import sqlite3

import pytest

from lynxc.compiler.lower.sql.sqlite.origins import not_null_columns

SCHEMA = """\
CREATE TABLE a (id INTEGER PRIMARY KEY, k TEXT NOT NULL, v REAL, n INTEGER NOT NULL, t TEXT);
CREATE TABLE b (id INTEGER NOT NULL, a_id INTEGER NOT NULL, w TEXT NOT NULL, x INTEGER);
CREATE INDEX b_a ON b (a_id, w);
CREATE TABLE c (code TEXT PRIMARY KEY NOT NULL, label TEXT) WITHOUT ROWID;
"""
SEED = 20261202
CASES = 400


def database() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.executescript(SCHEMA)
    rng = random.Random(SEED)
    for i in range(1, 30):
        connection.execute(
            "INSERT INTO a VALUES (?, ?, ?, ?, ?)",
            (i, f"k{i % 7}", rng.choice([None, i * 1.5]), i % 5, rng.choice([None, "t", "u"])),
        )
    for i in range(1, 40):
        connection.execute(
            "INSERT INTO b VALUES (?, ?, ?, ?)", (i, rng.randint(1, 40), f"w{i % 4}", rng.choice([None, i]))
        )
    for i in range(10):
        connection.execute("INSERT INTO c VALUES (?, ?)", (f"k{i}", rng.choice([None, "x"])))
    return connection


A_COLUMNS = ["a.id", "a.k", "a.v", "a.n", "a.t"]
B_COLUMNS = ["b.id", "b.a_id", "b.w", "b.x"]
C_COLUMNS = ["c.code", "c.label"]
EXPRESSIONS = [
    "1",
    "'lit'",
    "NULL",
    "a.n + 1",
    "upper(a.k)",
    "coalesce(a.t, 'z')",
    "CASE WHEN a.n > 2 THEN a.k END",
]


JOINS = [
    "",
    "JOIN b ON b.a_id = a.id",
    "LEFT JOIN b ON b.a_id = a.id",
    "LEFT JOIN c ON c.code = a.k",
    "JOIN c ON c.code = a.k",
    "CROSS JOIN b",
    "RIGHT JOIN b ON b.a_id = a.id",
    "FULL JOIN b ON b.a_id = a.id",
]
SCALAR = "SELECT a.k AS k, (SELECT b.w FROM b WHERE b.a_id = a.id) AS w, (SELECT count(*) FROM b) AS n FROM a"


def statement(rng: random.Random) -> str:
    join = rng.choice(JOINS)
    pool = A_COLUMNS + (B_COLUMNS if " b" in join else []) + (C_COLUMNS if " c" in join else []) + EXPRESSIONS
    shape = rng.choice(["plain", "plain", "plain", "group", "aggregate", "subquery", "compound", "scalar"])
    where = rng.choice(
        ["", "WHERE a.n > 1", "WHERE a.v IS NULL", "WHERE a.k = 'k3'", "WHERE a.id IN (1, 2, 3)"]
    )
    order = rng.choice(["", "ORDER BY 1", "ORDER BY a.id DESC", "LIMIT 5", "ORDER BY a.k LIMIT 3"])
    chosen = rng.sample(pool, rng.randint(1, 4))
    columns = ", ".join(f"{c} AS c{i}" for i, c in enumerate(chosen))
    if shape == "group":
        aggregates = "count(*) AS n, max(a.v) AS m, min(a.n) AS mn"
        return f"SELECT a.k AS g, {aggregates} FROM a {join} {where} GROUP BY a.k"
    if shape == "aggregate":
        return f"SELECT count(*) AS n, max(a.n) AS m, a.k AS bare, sum(a.v) AS s FROM a {join} {where}"
    if shape == "subquery":
        outer = "" if "a." in order else order
        return f"SELECT * FROM (SELECT {columns} FROM a {join} {where}) AS s {outer}"
    if shape == "compound":
        limit = order if order == "LIMIT 5" else ""
        return f"SELECT a.k AS x, a.n AS y FROM a UNION ALL SELECT t, v FROM a {limit}"
    if shape == "scalar":
        return SCALAR
    return f"SELECT {'DISTINCT ' if rng.random() < 0.2 else ''}{columns} FROM a {join} {where} {order}"


def test_the_sweep_finds_no_wrong_claim() -> None:
    connection = database()
    rng = random.Random(SEED)
    claimed = 0
    for _ in range(CASES):
        sql = statement(rng)
        proved = not_null_columns(connection, sql, {})
        rows = connection.execute(sql).fetchall()
        for index, is_proved in enumerate(proved):
            if is_proved:
                claimed += 1
                assert all(row[index] is not None for row in rows), f"column {index} of {sql} holds NULL"
    assert claimed > 50  # the proof proves something


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT id, k, v, n, t FROM a", (True, True, False, True, False)),
        ("SELECT a.k, b.w FROM a JOIN b ON b.a_id = a.id WHERE a.n > 1", (True, True)),
        ("SELECT a.k, b.w FROM a LEFT JOIN b ON b.a_id = a.id", (True, False)),
        ("SELECT 1 AS one, 'x' AS s, NULL AS z", (True, True, False)),
        ("SELECT max(n) AS m FROM a", (False,)),
        ("SELECT (SELECT k FROM a LIMIT 1) AS s", (False,)),
        ("SELECT code FROM c", (False,)),  # WITHOUT ROWID: left out, so nullable
        # Through the sorter; n is not proved: its register is reused for v when rows come out.
        ("SELECT k, v, n FROM a ORDER BY v DESC", (True, False, False)),
        ("SELECT a.k, b.w FROM a LEFT JOIN b ON b.a_id = a.id ORDER BY b.w", (True, False)),
    ],
)
def test_known_cases(sql: str, expected: tuple[bool, ...]) -> None:
    assert not_null_columns(database(), sql, {}) == expected
