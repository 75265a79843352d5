"""Who is calling: the verified caller of an HTTP request, from an OAuth access token or an API key.

The host and its transports use this package; a backend only ever sees the resulting `Caller` on
`ctx`. Each module is one way of proving who a caller is (`tokens`: JWT access tokens checked
against the issuer's keys; `introspection`: opaque tokens asked about at the issuer; `api_keys`:
keys kept hashed in a file), and every one of them answers with a `Caller` or an `AuthRefused`.
"""
