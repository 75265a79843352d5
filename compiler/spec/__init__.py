"""The spec front end: YAML files with positions -> validated spec models.

Owns reading spec files and folders (`load`), YAML with a `file:line:col` for every node and the
budgets that keep hostile YAML bounded (`source`), the versioned Pydantic models of the format
(`models`) and their validation into diagnostics (`parse`).

May import only the shared bottom modules of `lynxc.compiler` (diagnostics, rules, limits,
suggest). Everything downstream reads what it produces; it reads nothing downstream.
"""
