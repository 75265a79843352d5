"""The lynxc compiler: YAML spec -> IR -> checks -> generated files.

Pipeline (one direction): `source` reads YAML with positions, `spec` validates it against
the versioned models, `lower` resolves it into the frozen `ir`, `checks` add semantic
diagnostics, and `emit` renders the IR into `{relative path: text}`.
"""
