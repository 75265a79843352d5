"""`lynxc import openapi`: an OpenAPI 3.0/3.1 or Swagger 2.0 document in, a folder spec of HTTP
tools out (`backend: {http: ...}`), one tool per operation, what cannot be mapped skipped with
its reason."""

from .errors import OpenAPIError
from .importer import ImportResult, Skipped, import_document
from .writer import SpecExists, render_files, write_spec

__all__ = [
    "ImportResult",
    "OpenAPIError",
    "Skipped",
    "SpecExists",
    "import_document",
    "render_files",
    "write_spec",
]
