"""`lynxc docs`: a static documentation site for the servers of a project.

`model` turns each compiled server (its IR, wire form, lint score and changelog) into plain
data for the pages; `render` fills the Jinja2 templates (autoescape on) and the bundled CSS and
JavaScript; `site` writes the whole site at once (built in a hidden sibling folder and swapped in,
see compiler/files.py) and refuses to replace a folder lynxc did not write.

Sits beside `lynxc.compiler.build` in the layers: it reads compile results, review (changelog)
and lint, never the MCP SDK or the runtime's heavy libraries."""
