"""Where an index lives: moved to runtime/backends/object_store/location.py (the records store
uses it too); the names lynx-mcp's modules import stay here."""

from ..object_store.location import (  # noqa: F401
    CLIENT_OPTIONS,
    IndexLocation,
    describe_error,
    is_uri,
    location_from_settings,
    redact,
    secrets,
)
