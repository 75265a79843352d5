"""The stdio transport: one JSON-RPC message per line on stdin and stdout, every line answered.

The SDK's `stdio_server` decodes stdin with `errors="replace"` (invalid UTF-8 silently becomes
U+FFFD and is served as if sent) and passes a line it cannot parse (a lone surrogate escape,
broken JSON) to the session as an exception, which the server logs at debug level and drops:
the client hears nothing and waits for its timeout. Here each line is read as bytes and checked
by `jsonrpc_frames` (strict UTF-8 JSON, then the envelope); a bad line is answered with -32700
or -32600 and the next line is served as usual. Blank lines are not messages and are skipped.

As in the SDK, fd 0 reads the null device and fd 1 writes to stderr while serving, and the wire
uses private duplicates of both: a backend's subprocess or stray `print` can neither consume
requests nor corrupt responses. Both descriptors are restored on exit.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import IO, Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from .jsonrpc_frames import FrameError, parse_frame

logger = logging.getLogger("lynxc.runtime.stdio")


@asynccontextmanager
async def stdio_transport(
    stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run`, over the process's stdin and stdout unless
    binary streams are given."""
    restores: list[Callable[[], None]] = []
    try:
        if stdin is None:
            stdin = _claim(0, "rb", lambda: os.open(os.devnull, os.O_RDONLY), restores)
        if stdout is None:
            stdout = _claim(1, "wb", lambda: os.dup(2), restores)
        async with _serve_streams(stdin, stdout) as streams:
            yield streams
    finally:
        for restore in reversed(restores):
            restore()


@asynccontextmanager
async def _serve_streams(stdin: IO[bytes], stdout: IO[bytes]) -> AsyncIterator[tuple[Any, Any]]:
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)
    answers = outgoing.clone()  # the reader's own handle, for answering frames it refuses
    lines = anyio.wrap_file(stdin)
    out = anyio.wrap_file(stdout)

    async def read() -> None:
        async with incoming_send, answers:
            async for line in lines:
                if not line.strip():
                    continue
                try:
                    message = parse_frame(line)
                except FrameError as err:
                    logger.warning("answered a malformed frame: %s", err)
                    await answers.send(SessionMessage(err.answer))
                    continue
                await incoming_send.send(SessionMessage(message))

    async def write() -> None:
        async with outgoing_receive:
            async for session_message in outgoing_receive:
                line = _encode(session_message.message)
                if line is not None:
                    await out.write(line + b"\n")
                    await out.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        yield incoming, outgoing


def _encode(message: types.JSONRPCMessage) -> bytes | None:
    """The message as one line of JSON. A response that cannot be serialized still answers its
    request, with -32603, rather than ending the writer and with it the connection."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except Exception:
        logger.exception("a message could not be serialized")
        request_id = getattr(message, "id", None)
        if request_id is None:
            return None  # a notification: nothing to answer
        error = types.ErrorData(code=types.INTERNAL_ERROR, message="the response could not be serialized")
        answer = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return answer.model_dump_json(by_alias=True, exclude_unset=True).encode()


def _claim(
    fd: int, mode: str, open_diversion: Callable[[], int], restores: list[Callable[[], None]]
) -> IO[bytes]:
    """A private duplicate of fd for the wire, with fd itself pointed at `open_diversion()`.
    Falls back to the sys stream's buffer, unclaimed, where descriptors cannot be moved."""
    stream = sys.stdin if fd == 0 else sys.stdout
    try:
        if stream.fileno() != fd:
            return stream.buffer
        private = os.dup(fd)
    except (AttributeError, OSError, ValueError):
        return stream.buffer
    try:
        diversion = open_diversion()
        try:
            os.dup2(diversion, fd)
        finally:
            os.close(diversion)
    except OSError:
        os.close(private)
        return stream.buffer
    _rebind_windows_handle(fd)

    def restore() -> None:
        os.dup2(private, fd)
        _rebind_windows_handle(fd)

    restores.append(restore)
    # closefd=False: a worker thread may still block reading it after we leave; never recycle it.
    return os.fdopen(private, mode, closefd=False)


def _rebind_windows_handle(fd: int) -> None:
    """Subprocesses on Windows inherit the Win32 standard handle, which dup2 does not move."""
    if sys.platform == "win32":  # pragma: no cover
        from mcp.os.win32.utilities import rebind_std_handle_to_fd

        rebind_std_handle_to_fd(fd)
