"""A random sweep of the Postgres nullability prover: a seeded generator of SELECTs over pagila
(joins of every kind, nested and LATERAL, filters, GROUP BY with ROLLUP/CUBE/GROUPING SETS,
aggregates, windows, set operations, subqueries, CTEs, literals, COALESCE/CASE/NULLIF, scalar
subqueries) runs on the trap database, where outer joins miss and nullable columns are NULL. No
column the prover calls non-null may hold a NULL in the rows Postgres returns.

The sweep would pass for a prover that claims nothing, so it also counts the claims it put to the
test (a non-null claim on a column with rows) and requires many. A prover that ignores which side
of a join is padded, or the rows a rollup adds, fails it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
import pytest

from lynxc.compiler.lower.sql.postgres.nullability import not_null_columns
from tests.compiler.sql.pg_nullability_db import describe, null_columns, trap_database
from tests.fixtures.postgres import PostgresServer, postgres_server  # noqa: F401

SEED = 26
STATEMENTS = 300

# pagila's tables as the generator sees them: (column, type); types: int, text, num, ts, bool.
TABLES: dict[str, list[tuple[str, str]]] = {
    "film": [("film_id", "int"), ("title", "text"), ("description", "text"), ("release_year", "int"),
             ("language_id", "int"), ("original_language_id", "int"), ("length", "int"),
             ("rental_rate", "num"), ("last_update", "ts")],
    "actor": [("actor_id", "int"), ("first_name", "text"), ("last_name", "text"), ("last_update", "ts")],
    "film_actor": [("actor_id", "int"), ("film_id", "int")],
    "category": [("category_id", "int"), ("name", "text")],
    "film_category": [("film_id", "int"), ("category_id", "int")],
    "language": [("language_id", "int"), ("name", "text")],
    "inventory": [("inventory_id", "int"), ("film_id", "int"), ("store_id", "int")],
    "rental": [("rental_id", "int"), ("rental_date", "ts"), ("inventory_id", "int"), ("customer_id", "int"),
               ("return_date", "ts"), ("staff_id", "int")],
    "customer": [("customer_id", "int"), ("store_id", "int"), ("first_name", "text"), ("email", "text"),
                 ("address_id", "int"), ("active", "int")],
    "address": [("address_id", "int"), ("address", "text"), ("address2", "text"), ("district", "text"),
                ("postal_code", "text")],
}  # fmt: skip
# Foreign keys: (table, column, table, column), joined either way round.
EDGES = [
    ("film", "language_id", "language", "language_id"),
    ("film", "original_language_id", "language", "language_id"),
    ("film_actor", "film_id", "film", "film_id"),
    ("film_actor", "actor_id", "actor", "actor_id"),
    ("film_category", "film_id", "film", "film_id"),
    ("film_category", "category_id", "category", "category_id"),
    ("inventory", "film_id", "film", "film_id"),
    ("rental", "inventory_id", "inventory", "inventory_id"),
    ("rental", "customer_id", "customer", "customer_id"),
    ("customer", "address_id", "address", "address_id"),
]
LITERALS = {"int": ["0", "1", "7", "42"], "text": ["'A'", "'x'", "''"], "num": ["2.5", "0.99"],
            "ts": ["TIMESTAMPTZ '2024-01-01'"], "bool": ["true", "false"]}  # fmt: skip
SQL_TYPES = {"int": "int", "text": "text", "num": "numeric", "ts": "timestamptz", "bool": "boolean"}
# Fewer rows (a tenth of the films, a quarter of the rentals), so that several hundred statements
# with joins and correlated subqueries run in seconds; every trap row is kept.
SMALLER = """
DELETE FROM payment;
DELETE FROM rental WHERE rental_id % 4 <> 0
    OR inventory_id IN (SELECT inventory_id FROM inventory WHERE film_id BETWEEN 100 AND 1000);
DELETE FROM inventory WHERE film_id BETWEEN 100 AND 1000;
DELETE FROM film_actor WHERE film_id BETWEEN 100 AND 1000;
DELETE FROM film_category WHERE film_id BETWEEN 100 AND 1000;
DELETE FROM film_embedding WHERE film_id BETWEEN 100 AND 1000;
DELETE FROM film WHERE film_id BETWEEN 100 AND 1000;
"""
JOINS = ["JOIN", "JOIN", "LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"]


@dataclass
class Rel:
    alias: str
    columns: list[tuple[str, str]]
    table: str | None = None  # a base table (edges lead to it)


@dataclass
class Generator:
    rng: random.Random
    names: int = 0
    ctes: list[str] = field(default_factory=list)

    def name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def pick(self, options: list) -> object:
        return options[self.rng.randrange(len(options))]

    # --- statements ------------------------------------------------------------------------

    def statement(self) -> str:
        self.ctes = []
        body, _ = self.query(depth=0)
        return ("WITH " + ", ".join(self.ctes) + " " if self.ctes else "") + body

    def query(self, depth: int, types: list[str] | None = None) -> tuple[str, list[str]]:
        if depth < 2 and self.rng.random() < 0.15:
            left, types = self.select(depth + 1, types)
            right, _ = self.select(depth + 1, types)
            op = self.pick(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "UNION ALL"])
            return f"({left}) {op} ({right})", types
        return self.select(depth, types)

    def select(self, depth: int, types: list[str] | None = None) -> tuple[str, list[str]]:
        rels, from_sql, where = self.from_clause(depth)
        if types is None:
            types = [self.pick(list(LITERALS)) for _ in range(self.rng.randint(1, 4))]
        where += self.filters(rels)
        mode = self.pick(["plain", "plain", "aggregate", "window"])
        group = ""
        if mode == "aggregate":
            keys = [self.column(rels, self.pick(list(LITERALS))) for _ in range(self.rng.randint(0, 2))]
            keys = [key for key in keys if key is not None]
            items = [self.aggregate_item(t, rels, keys) for t in types]
            if keys:
                kind = self.pick(["", "", "ROLLUP", "CUBE", "GROUPING SETS"])
                listed = ", ".join(k for k, _ in keys)
                if kind == "GROUPING SETS":
                    group = f" GROUP BY GROUPING SETS (({listed}), ())"
                elif kind:
                    group = f" GROUP BY {kind} ({listed})"
                else:
                    group = f" GROUP BY {listed}"
        elif mode == "window":
            items = [
                self.window_item(t, rels) if self.rng.random() < 0.6 else self.expr(t, rels, 1) for t in types
            ]
        else:
            items = [self.expr(t, rels, 0) for t in types]
        where_sql = " WHERE " + " AND ".join(where) if where else ""
        select_list = ", ".join(f"{item} AS c{i}" for i, item in enumerate(items))
        distinct = "DISTINCT " if self.rng.random() < 0.1 else ""
        return f"SELECT {distinct}{select_list} FROM {from_sql}{where_sql}{group}", types

    # --- FROM ------------------------------------------------------------------------------

    def from_clause(self, depth: int) -> tuple[list[Rel], str, list[str]]:
        rel, sql = self.relation(depth)
        rels, where = [rel], []
        for _ in range(self.rng.randint(0, 2)):
            joined = self.join(rels, depth)
            if joined is None:
                break
            new_rels, join_sql, condition = joined
            kind = self.pick([*JOINS, "CROSS", "LATERAL"] if depth < 2 else JOINS)
            if kind == "CROSS":
                sql += f", {join_sql}"
                where.append(condition)
            elif kind == "LATERAL":
                lateral = self.lateral(rels, depth)
                if lateral is None:
                    continue
                lateral_rel, lateral_sql = lateral
                join = self.pick(["CROSS JOIN LATERAL", "LEFT JOIN LATERAL"])
                sql += f" {join} {lateral_sql}" + (" ON true" if join.startswith("LEFT") else "")
                new_rels = [lateral_rel]
            else:
                sql += f" {kind} {join_sql} ON {condition}"
            rels.extend(new_rels)
        return rels, sql, where

    def relation(self, depth: int) -> tuple[Rel, str]:
        roll = self.rng.random()
        if depth < 2 and roll < 0.12:
            body, types = self.query(depth + 1)
            alias = self.name("s")
            return Rel(alias, [(f"c{i}", t) for i, t in enumerate(types)]), f"({body}) AS {alias}"
        if depth < 2 and roll < 0.2:
            body, types = self.query(depth + 1)
            alias = self.name("w")
            self.ctes.append(f"{alias} AS ({body})")
            return Rel(alias, [(f"c{i}", t) for i, t in enumerate(types)]), alias
        table = self.pick(list(TABLES))
        alias = self.name("t")
        return Rel(alias, TABLES[table], table), f"{table} {alias}"

    def join(self, rels: list[Rel], depth: int) -> tuple[list[Rel], str, str] | None:
        """A table joined along a foreign key to a table already there, or a nested join."""
        options = [(rel, *edge) for rel in rels if rel.table for edge in _edges(rel.table)]
        if not options:
            # A subquery or CTE: join on any two columns of one type.
            rel = rels[-1]
            table = self.pick(list(TABLES))
            alias = self.name("t")
            new = Rel(alias, TABLES[table], table)
            pairs = [(a, b) for a, ta in rel.columns for b, tb in new.columns if ta == tb == "int"]
            if not pairs:
                return None
            a, b = self.pick(pairs)
            return [new], f"{table} {alias}", f"{rel.alias}.{a} = {alias}.{b}"
        rel, mine, other, theirs = self.pick(options)
        alias = self.name("t")
        new = Rel(alias, TABLES[other], other)
        if self.rng.random() < 0.25:
            # (other JOIN third ON ...) nested on the right
            inner = self.join([new], depth)
            if inner is not None and inner[0][0].table:
                inner_rels, inner_sql, inner_condition = inner
                kind = self.pick(["JOIN", "LEFT JOIN"])
                return (
                    [new, *inner_rels],
                    f"({other} {alias} {kind} {inner_sql} ON {inner_condition})",
                    f"{rel.alias}.{mine} = {alias}.{theirs}",
                )
        return [new], f"{other} {alias}", f"{rel.alias}.{mine} = {alias}.{theirs}"

    def lateral(self, rels: list[Rel], depth: int) -> tuple[Rel, str] | None:
        bases = [rel for rel in rels if rel.table]
        if not bases:
            return None
        outer = self.pick(bases)
        edges = _edges(outer.table)
        if not edges:
            return None
        mine, other, theirs = self.pick(edges)
        inner_alias = self.name("t")
        inner = Rel(inner_alias, TABLES[other], other)
        types = [self.pick(list(LITERALS)) for _ in range(self.rng.randint(1, 3))]
        if self.rng.random() < 0.5:
            items = [self.aggregate_item(t, [inner], []) for t in types]
        else:
            items = [self.expr(t, [inner, outer], 1) for t in types]
        alias = self.name("l")
        limit = " LIMIT 1" if self.rng.random() < 0.3 else ""
        select_list = ", ".join(f"{item} AS c{i}" for i, item in enumerate(items))
        sql = (
            f"(SELECT {select_list} FROM {other} {inner_alias} "
            f"WHERE {inner_alias}.{theirs} = {outer.alias}.{mine}{limit}) AS {alias}"
        )
        return Rel(alias, [(f"c{i}", t) for i, t in enumerate(types)]), sql

    def filters(self, rels: list[Rel]) -> list[str]:
        out = []
        for _ in range(self.rng.choice([0, 0, 1, 1, 2])):
            column = self.column(rels, self.pick(list(LITERALS)))
            if column is None:
                continue
            ref, kind = column
            options = [f"{ref} IS NOT NULL", f"{ref} IS NULL"]
            if kind in ("int", "num"):
                options += [
                    f"{ref} > 5",
                    f"{ref} = 1",
                    f"{ref} BETWEEN 1 AND 50",
                    f"({ref} > 3 OR {ref} IS NULL)",
                ]
            elif kind == "text":
                options += [f"{ref} LIKE 'A%'", f"{ref} <> 'x'", f"({ref} IS NOT NULL OR {ref} > 'B')"]
            options.append("false" if self.rng.random() < 0.3 else "true")
            out.append(self.pick(options))
        return out

    # --- expressions -----------------------------------------------------------------------

    def column(self, rels: list[Rel], kind: str) -> tuple[str, str] | None:
        found = [(f"{rel.alias}.{name}", t) for rel in rels for name, t in rel.columns if t == kind]
        return self.pick(found) if found else None

    def literal(self, kind: str) -> str:
        if self.rng.random() < 0.1:
            return f"NULL::{SQL_TYPES[kind]}"
        return self.pick(LITERALS[kind])

    def expr(self, kind: str, rels: list[Rel], depth: int) -> str:
        roll = self.rng.random()
        column = self.column(rels, kind)
        if column is not None and (roll < 0.45 or depth >= 3):
            return column[0]
        if roll < 0.55 or depth >= 3:
            return self.literal(kind)

        def sub(k: str = kind) -> str:
            return self.expr(k, rels, depth + 1)

        common = [
            lambda: f"coalesce({sub()}, {sub()})",
            lambda: f"CASE WHEN {sub('bool')} THEN {sub()} ELSE {sub()} END",
            lambda: f"CASE WHEN {sub('bool')} THEN {sub()} END",
            lambda: f"nullif({sub()}, {sub()})",
            lambda: f"greatest({sub()}, {sub()})",
        ]
        specific = {
            "int": [
                lambda: f"{sub()} + {sub()}",
                lambda: f"{sub()} * 2",
                lambda: f"abs({sub()})",
                lambda: f"length({sub('text')})",
                lambda: f"(SELECT max(film_id) FROM film WHERE film_id < {sub()})",
                lambda: f"CAST({sub('num')} AS int)",
                lambda: f"-{sub()}",
            ],
            "text": [
                lambda: f"{sub()} || {sub()}",
                lambda: f"lower({sub()})",
                lambda: f"upper({sub()})",
                lambda: f"btrim({sub()})",
                lambda: f"concat({sub()}, {sub()})",
                lambda: f"{sub('int')}::text",
                lambda: f"substr({sub()}, 2)",
                lambda: f"left({sub()}, 3)",
                lambda: f"md5({sub()})",
                lambda: f"(SELECT name FROM language WHERE language_id = {sub('int')})",
            ],
            "num": [lambda: f"{sub()} * 2", lambda: f"round({sub()})", lambda: f"{sub('int')}::numeric"],
            "ts": [lambda: f"date_trunc('day', {sub()})"],
            "bool": [
                lambda: f"{sub(self.pick(list(LITERALS)))} IS NULL",
                lambda: f"{sub('int')} IS NOT NULL",
                lambda: f"{sub('int')} = {sub('int')}",
                lambda: f"{sub('text')} < {sub('text')}",
                lambda: f"{sub('text')} LIKE 'A%'",
                lambda: f"NOT {sub()}",
                lambda: f"({sub()} AND {sub()})",
                lambda: f"({sub()} OR {sub()})",
                lambda: f"EXISTS (SELECT 1 FROM film_actor WHERE actor_id = {sub('int')})",
                lambda: f"{sub('int')} IN (1, 2, 3)",
                lambda: f"{sub('int')} BETWEEN 1 AND 50",
                lambda: f"{sub('text')} IS DISTINCT FROM {sub('text')}",
            ],
        }
        return self.pick(common + specific[kind])()

    def aggregate_item(self, kind: str, rels: list[Rel], keys: list[tuple[str, str]]) -> str:
        same = [ref for ref, t in keys if t == kind]
        if same and self.rng.random() < 0.4:
            key = self.pick(same)
            return self.pick([key, f"coalesce({key}, {self.literal(kind)})"])
        column = self.column(rels, kind)
        ref = column[0] if column else self.literal(kind)
        options = {
            "int": [
                "count(*)",
                f"count({ref})",
                f"sum({ref})",
                f"max({ref})",
                "count(*) + 1",
                f"coalesce(min({ref}), 0)",
            ],
            "text": [f"max({ref})", f"string_agg({ref}, ',')", f"coalesce(min({ref}), 'none')"],
            "num": [f"avg({ref})", f"sum({ref})", f"coalesce(max({ref}), 0)"],
            "ts": [f"max({ref})", f"min({ref})"],
            "bool": ["count(*) > 1", f"bool_and({ref} IS NULL)", f"count({ref}) = 0"],
        }[kind]
        if keys and kind == "int" and self.rng.random() < 0.2:
            return f"grouping({keys[0][0]})"
        return self.pick(options)

    def window_item(self, kind: str, rels: list[Rel]) -> str:
        order = self.column(rels, self.pick(["int", "text"]))
        over = f"OVER (ORDER BY {order[0]})" if order else "OVER ()"
        column = self.column(rels, kind)
        ref = column[0] if column else self.literal(kind)
        options = {
            "int": ["row_number() " + over, "rank() " + over, "count(*) OVER ()", f"count({ref}) {over}",
                    f"sum({ref}) OVER ()", f"lag({ref}) {over}", "ntile(3) " + over,
                    f"first_value({ref}) {over}"],
            "text": [f"lag({ref}) {over}", f"first_value({ref}) {over}", f"max({ref}) OVER ()"],
            "num": [f"sum({ref}) {over}", f"lead({ref}) {over}"],
            "ts": [f"max({ref}) OVER ()", f"lag({ref}) {over}"],
            "bool": [f"count({ref}) OVER () > 0", "row_number() " + over + " = 1"],
        }[kind]  # fmt: skip
        return self.pick(options)


def _edges(table: str | None) -> list[tuple[str, str, str]]:
    """(column of `table`, other table, its column) for each foreign key either way round."""
    out = [(ac, b, bc) for a, ac, b, bc in EDGES if a == table]
    return out + [(bc, a, ac) for a, ac, b, bc in EDGES if b == table]


@pytest.fixture(scope="module")
def trap_db(postgres_server: PostgresServer) -> Iterator[psycopg.Connection]:  # noqa: F811
    with trap_database(postgres_server) as conn:
        conn.execute(SMALLER)
        conn.execute("ANALYZE")
        conn.execute("SET statement_timeout = '5s'")
        yield conn


def test_no_wrong_claim_in_a_random_sweep(trap_db: psycopg.Connection) -> None:
    generator = Generator(random.Random(SEED))
    wrong: list[str] = []
    invalid: list[str] = []
    tested = claimed = 0
    for _ in range(STATEMENTS):
        sql = generator.statement()
        try:
            described = describe(trap_db, sql)
            nulls, rows = null_columns(trap_db, sql)
        except ValueError as error:
            invalid.append(f"{sql}\n  {error}")
            continue
        claim = not_null_columns(trap_db, sql, described)
        wrong.extend(f"column {c}: {sql}" for c in sorted(nulls) if claim[c])
        claimed += sum(claim)
        tested += sum(claim) if rows else 0
    assert not wrong, "claimed non-null, holds NULL:\n" + "\n".join(wrong[:10])
    # The generator writes valid SQL (a few type clashes aside), and the claims were put to the test.
    assert len(invalid) < STATEMENTS // 20, "\n".join(invalid[:5])
    assert tested > STATEMENTS // 2, (tested, claimed)
