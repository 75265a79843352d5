"""Why a caller was refused: one exception every verifier raises, carrying what the host answers.

The reason is one line for the log and the `error_description`, and never contains the token or
key that was presented (a log line must not become the place a credential leaks from).
"""

from __future__ import annotations

from typing import Literal

# RFC 6750 §3.1 error codes, plus `temporarily_unavailable` (RFC 6749 §4.1.2.1) for an issuer
# that cannot be reached: the caller's token may be fine, so the answer is 503, not 401.
RefusalError = Literal["invalid_request", "invalid_token", "insufficient_scope", "temporarily_unavailable"]

_STATUS: dict[str, int] = {
    "invalid_request": 400,
    "invalid_token": 401,
    "insufficient_scope": 403,
    "temporarily_unavailable": 503,
}


class AuthRefused(Exception):
    """A credential was not accepted. `reason` is safe to log and to send back."""

    def __init__(self, reason: str, error: RefusalError = "invalid_token") -> None:
        super().__init__(reason)
        self.reason = reason
        self.error: RefusalError = error

    @property
    def status(self) -> int:
        """The HTTP status the host answers with (401, 403, 400 or 503)."""
        return _STATUS[self.error]
