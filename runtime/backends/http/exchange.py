"""One call's exchange with the API: credentials, retries, the OAuth 2 refresh, the answer read.

The caller bounds it all with the call's deadline (anyio.fail_after); `Call.deadline` tells the
retry logic how much of it is left, so a `Retry-After` that does not fit is not waited for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import httpx

from .catalog import Auth, HttpTool
from .credentials import Credentials, bearer, secret_values, static_credentials
from .pool import ServerPool
from .request import Request
from .results import json_result, status_error, text_result
from .retries import retry_wait
from .transport import Prepare, read_capped, read_start, send

ERROR_BODY_BYTES = 4096  # read of a non-2xx body, for its excerpt

LogFn = Callable[..., Awaitable[None]]  # ToolContext.log: (level, message, **data)


async def _no_log(level: str, message: str, /, **data: Any) -> None:
    return None


@dataclass(frozen=True)
class Call:
    tool: HttpTool
    auth: Auth | None
    settings: Mapping[str, Any]
    request: Request
    cap: int  # max_response_bytes
    retries: int
    deadline: float  # anyio.current_time() by which the call ends


async def exchange(pool: ServerPool, call: Call, log: LogFn = _no_log) -> dict[str, Any]:
    """The call's answer; `log` (the client's log) hears each upstream status at debug and each
    retry at warning, the request shown as in messages (credentials never in it)."""
    request, shown = call.request, call.request.shown
    secrets = secret_values(call.auth, call.settings)
    refreshed = False  # an OAuth 2 token refused with 401 is replaced once per call
    attempt = 0
    while True:
        credentials, token = await _credentials(pool, call)
        if token:
            secrets.append(token)
        response = await send(
            pool.client,
            request.method,
            request.url,
            request.content,
            _preparer(pool, call, credentials),
            shown,
        )
        if response.status_code == 401 and token and not refreshed:
            await response.aclose()
            pool.tokens.forget(call.auth, call.settings, token, shown)  # type: ignore[arg-type]
            refreshed = True
            continue
        remaining = call.deadline - anyio.current_time()
        wait = None
        if call.tool.idempotent and attempt < call.retries:
            wait = retry_wait(response.status_code, response.headers.get("retry-after"), attempt, remaining)
        await log("debug", f"{shown} answered {response.status_code}", status=response.status_code)
        if wait is None:
            break
        await log(
            "warning",
            f"{shown} answered {response.status_code}: retry {attempt + 1} of {call.retries} in {wait:g} s",
            status=response.status_code,
            retry=attempt + 1,
            wait_seconds=wait,
        )
        await response.aclose()
        await anyio.sleep(wait)
        attempt += 1
    if not response.is_success:
        body = await read_start(response, ERROR_BODY_BYTES)
        raise status_error(shown, response.status_code, response.reason_phrase, body, secrets)
    body = await read_capped(response, call.cap, shown)
    content_type = response.headers.get("content-type", "")
    if call.tool.response == "text":
        return text_result(body, content_type, response.charset_encoding)
    return json_result(call.tool, body, content_type, shown, secrets)


async def _credentials(pool: ServerPool, call: Call) -> tuple[Credentials, str | None]:
    """The call's credentials, and the OAuth 2 access token among them (or None)."""
    auth = call.auth
    if auth is None:
        return Credentials(), None
    if auth.kind != "oauth2_client_credentials":
        return static_credentials(auth, call.settings, call.request.shown), None
    token = await pool.tokens.token(pool.client, auth, call.settings, call.request.shown, call.cap)
    return bearer(token), token


def _preparer(pool: ServerPool, call: Call, credentials: Credentials) -> Prepare:
    """Builds each hop's request: the call's headers, then the credentials (over any header of
    the same name), an API key in the query added unless the hop's URL already has it."""
    accepts = call.tool.response == "json" and not any(k.lower() == "accept" for k, _ in call.request.headers)

    def prepare(method: str, url: httpx.URL, content: bytes | None) -> httpx.Request:
        replaced = {name.lower() for name, _ in credentials.headers}
        headers = [(k, v) for k, v in call.request.headers if k.lower() not in replaced]
        if content is None:
            headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
        if accepts:
            headers.append(("Accept", "application/json"))
        headers += credentials.headers
        missing = [(k, v) for k, v in credentials.query if k not in httpx.QueryParams(url.query.decode())]
        if missing:
            extra = urlencode(missing, quote_via=quote).encode()
            url = url.copy_with(query=url.query + b"&" + extra if url.query else extra)
        # As UTF-8 bytes: httpx would encode a str value as ASCII and fail on anything else.
        encoded = [(name.encode(), value.encode()) for name, value in headers]
        return pool.client.build_request(method, url, headers=encoded, content=content)

    return prepare
