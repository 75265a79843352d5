"""dot-harness's backends: search, read and list project text inside authorized workspaces
(strict UTF-8, literal search, sha256-pinned reads). Imports lynxc.runtime (backend, context,
errors, wire_values) and the shared modules of lynxc.runtime.backends (pinned, lines), never
another server's package."""
