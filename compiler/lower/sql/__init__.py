"""Check SQL tools against DuckDB at build time: the data a server declares, each statement, its
parameters and the types of its result."""
