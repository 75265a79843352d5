"""The one catalogue of rule IDs that spec checks (and later lint and diff) report under."""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Diagnostic, Severity, Span


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    category: str
    purpose: str


_RULES = (
    # spec: reading and shape
    Rule("YAML_SYNTAX", "error", "spec", "The file must be well-formed YAML."),
    Rule(
        "YAML_DUPLICATE_KEY",
        "error",
        "spec",
        "A mapping must not repeat a key; the later one would win silently.",
    ),
    Rule("SPEC_FILE_EMPTY", "error", "spec", "A spec file must hold a mapping, not nothing."),
    Rule(
        "SPEC_VERSION_UNSUPPORTED",
        "error",
        "spec",
        "`lynxc:` must name a spec format version this compiler reads.",
    ),
    Rule(
        "SPEC_KEY_UNKNOWN",
        "error",
        "spec",
        "Every key must be one the spec format defines (typos are caught).",
    ),
    Rule("SPEC_KEY_MISSING", "error", "spec", "Required keys must be present."),
    Rule("SPEC_VALUE_INVALID", "error", "spec", "A value must have the type and form its key requires."),
    Rule("SPEC_NOT_FOUND", "error", "spec", "A spec path given on the command line must exist."),
    # server
    Rule("SERVER_NAME_INVALID", "error", "server", "A server name is lowercase letters, digits and dashes."),
    Rule(
        "SERVER_VERSION_INVALID", "error", "server", "A server version must be semantic (MAJOR.MINOR.PATCH)."
    ),
    Rule("SERVER_NAME_DUPLICATE", "error", "server", "Two specs must not define the same server."),
    Rule("SETTING_DEFAULT_INVALID", "error", "server", "A setting's default must match its declared type."),
    # tools
    Rule("TOOL_NAME_INVALID", "error", "tool", "A tool name must match the MCP rule [A-Za-z0-9_.-]{1,128}."),
    Rule("TOOL_NAME_DUPLICATE", "error", "tool", "Tool names must be unique within a server."),
    Rule("TOOL_NONE", "error", "tool", "A server must declare at least one tool."),
    Rule(
        "TOOL_REFERENCE_UNKNOWN",
        "error",
        "tool",
        "A tool quoted in a description (`name`) must exist in the server.",
    ),
    Rule(
        "DESCRIPTION_TEMPLATE_UNKNOWN",
        "error",
        "tool",
        "A `{...}` placeholder in a description must name a declared cap (`{caps.NAME}`).",
    ),
    Rule("DESCRIPTION_FORMAT_UNKNOWN", "error", "tool", "A cap placeholder format must be one lynxc knows."),
    # parameters and schemas
    Rule("PARAM_TYPE_UNKNOWN", "error", "schema", "A schema type must be a JSON Schema type lynxc supports."),
    Rule(
        "PARAM_NAME_INVALID",
        "error",
        "schema",
        "A parameter name must be a plain identifier clients can send.",
    ),
    Rule("PARAM_BOUNDS_INVALID", "error", "schema", "Lower bounds must not exceed upper bounds."),
    Rule("PARAM_DEFAULT_INVALID", "error", "schema", "A default must satisfy its own schema."),
    Rule(
        "PARAM_KEYWORD_MISPLACED",
        "error",
        "schema",
        "A keyword must suit the schema's type (no minLength on an integer).",
    ),
    Rule("PATTERN_INVALID", "error", "schema", "A `pattern` must be a regular expression that compiles."),
    Rule("REF_UNRESOLVED", "error", "schema", "A `$ref` must point at a `$defs` entry of the same schema."),
    Rule("DEFS_NAME_CLASH", "error", "schema", "Input and output `$defs` of one tool must not share a name."),
    # caps
    Rule(
        "CAP_UNKNOWN", "error", "caps", "A reference to a cap (`caps.NAME`) must name one the tool declares."
    ),
    Rule("CAP_VALUE_EXCEEDS_MAX", "error", "caps", "A cap's value must not exceed its hard maximum."),
    # backends
    Rule(
        "BACKEND_UNKNOWN",
        "error",
        "backend",
        "A tool must bind to a built-in backend or an importable function.",
    ),
    Rule(
        "BACKEND_IMPORT_FAILED", "error", "backend", "A custom backend `package.module:function` must import."
    ),
    Rule(
        "BACKEND_PARAM_UNSUPPORTED",
        "error",
        "backend",
        "Every declared parameter must be one the backend honours.",
    ),
    Rule("BACKEND_PARAM_MISSING", "error", "backend", "Parameters the backend requires must be declared."),
    Rule(
        "BACKEND_CAP_UNSUPPORTED", "error", "backend", "Every declared cap must be one the backend enforces."
    ),
    Rule("BACKEND_CAP_MISSING", "error", "backend", "Caps the backend requires must be declared."),
    Rule(
        "BACKEND_SETTING_MISSING", "error", "backend", "Server settings the backend reads must be declared."
    ),
    # build
    Rule(
        "GENERATED_STALE", "error", "build", "`generated/` must match what the specs produce (`lynxc build`)."
    ),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}


def diagnostic(rule_id: str, message: str, span: Span, hint: str | None = None) -> Diagnostic:
    """A diagnostic at the severity the catalogue gives its rule."""
    return Diagnostic(rule_id, RULES[rule_id].severity, message, span, hint)
