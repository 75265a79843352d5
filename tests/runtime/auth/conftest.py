"""The real test authorization server (tests/fixtures/auth_server.py) for every auth test."""

from __future__ import annotations

from tests.fixtures.auth_server import auth_server, fresh_auth_server  # noqa: F401
