"""Schema review: what `lynxc diff` reports and the changelog derived from released versions.

Diff first, judge second (oasdiff's split): a structural diff of two wire forms, one entry per
changed field (`diff`); rules that judge each entry breaking, warning or info (`judge`, with
`judge_combinators`, `judge_context` and `schema_alternatives` for anyOf/oneOf); the same two
steps for the records a server declares (`collections`), its prompts (`prompts`) and its MCP
resources and templates (`mcp_resources`); pairing of servers and tools (`compare`); renderers
(`render`); released baselines and the changelog (`changelog`).

May import the shared bottom modules (diagnostics, rules, ir, wire, files) and the fixed
collections.json format (runtime/backends/records/definitions.py), and the SDK's RFC 6570
`UriTemplate` (imported only when a template changed); it judges wire forms, so it needs
neither the spec front end nor lint nor emit.
"""
