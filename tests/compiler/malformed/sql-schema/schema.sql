CREATE TABLE cities (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, country VARCHAR);
INSERT INTO cities VALUES (1, 'Paris', 'France');
