-- The support desk's tables (data/make_sqlite.py writes desk.sqlite with them).
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    tier TEXT NOT NULL CHECK (tier IN ('standard', 'gold'))
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    placed TEXT NOT NULL,           -- ISO 8601 date
    status TEXT NOT NULL CHECK (status IN ('placed', 'shipped', 'delivered', 'cancelled')),
    total_cents INTEGER NOT NULL,
    item TEXT NOT NULL
);
CREATE INDEX orders_by_customer ON orders (customer_id, placed);
