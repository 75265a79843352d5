"""Serving defaults. They live apart from the host and the transports so that the command
line can show them in `--help` without importing the MCP SDK."""

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_PAGE_SIZE = 100  # tools per tools/list page
