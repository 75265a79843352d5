"""The test API (tests/fixtures/http_api.py), one per module, its records cleared per test."""

from tests.fixtures.http_api import api, http_api  # noqa: F401
