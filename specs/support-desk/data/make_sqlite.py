"""Write desk.sqlite: made-up customers and their orders for the support-desk example server.

Every value is generated here from a fixed seed (no outside data, so no licence beyond the
project's): `python specs/support-desk/data/make_sqlite.py` writes the same file every time.
"""

from __future__ import annotations

import os
import random
import sqlite3
import tempfile
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUSTOMERS = [
    ("alice@example.com", "Alice Lee", "gold"),
    ("bob@example.com", "Bob Okafor", "standard"),
    ("chen@example.com", "Chen Wei", "standard"),
    ("dara@example.com", "Dara Singh", "gold"),
    ("eve@example.com", "Eve Martin", "standard"),
]
ITEMS = ["kettle", "desk lamp", "headphones", "backpack", "coffee grinder", "monitor arm", "keyboard"]
STATUSES = ["placed", "shipped", "delivered", "delivered", "delivered", "cancelled"]


def build(path: Path, orders_per_customer: int = 12, seed: int = 27) -> None:
    rng = random.Random(seed)
    schema = (HERE / "schema.sql").read_text()
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(descriptor)
    connection = sqlite3.connect(temporary)
    try:
        connection.executescript(schema)
        connection.executemany(
            "INSERT INTO customers (id, email, name, tier) VALUES (?, ?, ?, ?)",
            [(i + 1, *customer) for i, customer in enumerate(CUSTOMERS)],
        )
        order_id = 1000
        for customer_id in range(1, len(CUSTOMERS) + 1):
            for _ in range(orders_per_customer):
                order_id += 1
                placed = date(2026, 1, 1) + timedelta(days=rng.randrange(0, 330))
                connection.execute(
                    "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
                    (order_id, customer_id, placed.isoformat(), rng.choice(STATUSES),
                     rng.randrange(500, 25000), rng.choice(ITEMS)),
                )
        connection.commit()
    finally:
        connection.close()
    os.chmod(temporary, 0o644)  # mkstemp makes it private; this is sample data for everyone
    os.replace(temporary, path)  # a build killed midway leaves the old file whole


if __name__ == "__main__":
    build(HERE / "desk.sqlite")
