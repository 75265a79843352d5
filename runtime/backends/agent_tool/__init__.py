"""agent-tool's backends: grep, glob and read under configured roots, on ripgrep. Imports
lynxc.runtime (backend, context, errors) and the shared modules of lynxc.runtime.backends
(pinned, lines, vendored), never another server's package."""
