"""Check SQL tools against PostgreSQL at build time."""
