"""Lowering: spec models -> the IR (frozen, resolved, deterministic), with the semantic checks.

Owns one server's lowering and `compile_spec` (load + lower, in `server`), parameter and output
schemas with caps resolved (`schema`), description templates such as `{caps.NAME:bytes}`
(`templates_text`), `$ref` graphs (`ref_graph`), linear-time pattern checks (`patterns`),
reading user backends' declarations in a child process (`backend_probe`), declared resources and
their record schemas (`resources`) and the records tools a server with resources gets
(`records_tools`, defined in `records_tools.yaml`).

May import `lynxc.compiler.spec`, the shared bottom modules (diagnostics, rules, ir, wire,
limits, suggest, backticks) and `lynxc.runtime.backend` (the declaration a backend carries).
"""
