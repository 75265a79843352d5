"""Built-in backends: one package per bundled server (dot_harness, agent_tool, lynx), and what
several servers share: the modules here (pinned, lines, vendored) and the retrieval package.

A server's package imports lynxc.runtime (backend, context, errors, ...) and these shared
modules, never another server's package; a shared module never imports a server's package.
Heavy dependencies load at call time only: inside the functions that use them, or in modules
that only such functions import."""
