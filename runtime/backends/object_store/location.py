"""Where an index lives: a local folder, or a URI on an object store LanceDB supports
(`s3://bucket/prefix`, `gs://`, `az://`, ...).

An object-store index is reached with `index_storage`, LanceDB's `storage_options` (object_store
configuration keys: `endpoint`, `region`, `allow_http`, `aws_access_key_id`, ...), or, as with
any AWS, GCP or Azure client, with the environment (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`,
`AWS_ALLOW_HTTP`, ...); settings win over the environment. Credentials are secrets: a location
never shows them (its repr is its URI), and `redact` takes every secret value, from the
settings or the environment, out of a message before it is shown or logged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lynxc.runtime.setting_paths import is_uri

# object_store options that configure its HTTP client rather than the store: obstore takes them
# apart from the store's configuration (LanceDB takes both in one mapping).
CLIENT_OPTIONS = {
    "allow_http",
    "allow_invalid_certificates",
    "connect_timeout",
    "timeout",
    "pool_idle_timeout",
    "proxy_url",
    "user_agent",
}
# A value is secret when its key names one of these; short values (a region, "true") are not
# redacted, they would blank out ordinary words.
_SECRET_KEY = re.compile(
    r"secret|token|password|credential|access_key|account_key|master_key|customer_key|sas|key_id", re.I
)
_MIN_SECRET = 6


@dataclass(frozen=True)
class IndexLocation:
    uri: str  # an absolute local folder, or an object-store URI
    options: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, place: IndexLocation | str, options: Mapping[str, Any] | None = None) -> IndexLocation:
        if isinstance(place, IndexLocation):
            return place
        uri = place[len("file://") :] if place.startswith("file://") else place
        return cls(uri, {str(k): str(v) for k, v in (options or {}).items()})

    @property
    def remote(self) -> bool:
        return is_uri(self.uri)

    def storage_options(self) -> dict[str, str] | None:
        """LanceDB's `storage_options`: None for a local folder."""
        return dict(self.options) if self.remote else None

    def join(self, name: str) -> str:
        return self.uri.rstrip("/") + "/" + name

    def redact(self, message: str) -> str:
        return redact(message, self.options)

    def __str__(self) -> str:
        return self.uri


def location_from_settings(settings: Mapping[str, Any]) -> IndexLocation:
    return IndexLocation.of(settings["index_dir"], settings.get("index_storage") or {})


def secrets(options: Mapping[str, str]) -> list[str]:
    """The secret values of `options` and of the environment, longest first."""
    found = {str(v) for k, v in options.items() if _SECRET_KEY.search(k)}
    found |= {
        v
        for k, v in os.environ.items()
        if k.startswith(("AWS_", "GOOGLE_", "AZURE_")) and _SECRET_KEY.search(k)
    }
    return sorted((s for s in found if len(s) >= _MIN_SECRET), key=len, reverse=True)


def describe_error(err: BaseException) -> str:
    """The cause of an object-store or LanceDB failure in one line: LanceDB's messages are Rust
    debug dumps (nested structs, the crate's source path, the service's XML reply) in which the
    cause is a few words."""
    text = str(err)
    service = re.search(r"<Code>([^<]*)</Code>\s*<Message>([^<]*)</Message>", text)
    if service:
        return f"the object store answered {service.group(1)}: {service.group(2)}"
    status = re.search(r"status: (\d{3})", text)
    if status:
        return f"the object store answered HTTP {status.group(1)}"
    connect = re.search(r'ConnectError\(\s*"([^"]*)",\s*([^,)\s]*)', text)
    if connect:
        return f"cannot connect to the object store at {connect.group(2)} ({connect.group(1)})"
    scheme = re.search(
        r"No object store provider found for scheme: '([^']*)'\s*Valid schemes: ([^\n]*)", text
    )
    if scheme:
        return f"no object store for scheme {scheme.group(1)!r} (known: {scheme.group(2).strip()})"
    if "URL did not match any known pattern" in text:
        return "not an object-store URI LanceDB can read (write scheme://bucket/prefix)"
    first = re.sub(r",? ?/\S*\.rs:\d+:\d+", "", text.strip().splitlines()[0] if text.strip() else "")
    first = re.sub(r"(https?://[^\s?]*)\?\S*", r"\1", first)  # a URL's query may carry a signature
    return f"{type(err).__name__}: {first[:300]}"


def redact(message: str, options: Mapping[str, str]) -> str:
    """`message` without any secret, as written or URL-encoded (a SAS token in a request's URL)."""
    from urllib.parse import quote

    for secret in secrets(options):
        message = message.replace(secret, "***").replace(quote(secret, safe=""), "***")
    return message
