"""Write countries.sqlite, with the tables of schema.sql, from ../../countries-sql/data/countries.jsonl.gz.

Run from the repository root: `python specs/countries-sqlite/data/make_sqlite.py`. The output
is deterministic (rows in code order, no timestamps) and committed; rerun it only when the
source data changes.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent / "countries-sql" / "data" / "countries.jsonl.gz"
# The tables, as the build checks statements against them: one file for both.
SCHEMA = HERE / "schema.sql"


def rows() -> list[dict]:
    with gzip.open(SOURCE, "rt", encoding="utf-8") as lines:
        return sorted((json.loads(line) for line in lines if line.strip()), key=lambda c: c["cca3"])


def main() -> None:
    target = HERE / "countries.sqlite"
    fd, temp = tempfile.mkstemp(dir=HERE, suffix=".sqlite")
    os.close(fd)
    connection = sqlite3.connect(temp)
    try:
        connection.executescript(SCHEMA.read_text(encoding="utf-8"))
        for country in rows():
            connection.execute(
                "INSERT INTO countries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    country["cca3"],
                    country["name"]["common"],
                    country["name"]["official"],
                    country["region"],
                    country.get("subregion") or None,
                    (country.get("capital") or [None])[0],
                    country.get("area"),
                    int(country["landlocked"]),
                    int(country["unMember"]),
                    json.dumps(country["latlng"]) if country.get("latlng") else None,
                ),
            )
            for neighbour in country.get("borders", []):
                connection.execute("INSERT INTO borders VALUES (?, ?)", (country["cca3"], neighbour))
            for language, name in sorted(country.get("languages", {}).items()):
                connection.execute(
                    "INSERT INTO languages VALUES (?, ?, ?)", (country["cca3"], language, name)
                )
        connection.commit()
        connection.execute("VACUUM")
    finally:
        connection.close()
    os.chmod(temp, 0o644)
    os.replace(temp, target)


if __name__ == "__main__":
    main()
