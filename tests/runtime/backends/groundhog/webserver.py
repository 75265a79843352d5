"""A real web server on 127.0.0.1 for groundhog's tests: HTTP/1.1 (and HTTPS with a test CA),
one thread per connection, routes added per test.

    with WebServer() as web:
        url = web.page("/article", "<html>...</html>")
        web.redirect("/old", "/article")
        web.route("/custom", lambda request: Response(418, body=b"teapot"))
        ... fetch url ...
        assert web.requests_to("/article")[0].headers["user-agent"]

A route is a function Request -> Response, matched on the path (query aside): exact paths first,
then the longest prefix route (`route(prefix, handler, prefix=True)`). A Response's body is bytes
(sent with Content-Length) or an iterable of bytes (sent chunked, as produced: endless and
streamed bodies stop when the client goes away or the server closes). Every request is recorded
with the monotonic time its head arrived, so tests can assert order and spacing without timing
the client. The helpers return the route's URL on 127.0.0.1; `url(path, host=...)` names another
host (for a test resolver that maps it to 127.0.0.1: the server answers every Host).

HTTPS: `WebServer(tls=True)` serves TLS with a certificate from a throwaway trustme CA for
TLS_NAMES (and the `names` given); `client_ssl_context()` trusts that CA. It offers http/1.1 in
ALPN, and h2 first with `http2=True` (h2's state machine, flow control honoured; each request's
`version` says which was spoken). The server records the SNI name each TLS client sent
(`sni_names`).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import mimetypes
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    import ssl

TLS_NAMES = ("localhost", "127.0.0.1", "example.test", "secure.test")


@dataclass
class Request:
    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case; a repeated header joined with ", "
    host: str  # the Host header
    started: float  # time.monotonic() when the request's head was read
    target: str  # the request target as sent (path and query)
    peer: tuple[str, int]  # the client's address and port: one port per connection
    version: str = "HTTP/1.1"  # or "HTTP/2"


@dataclass
class Response:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | Iterable[bytes] = b""  # bytes: Content-Length; iterable: chunked, streamed
    delay: float = 0.0  # seconds to wait before answering (a slow server)


Route = Callable[[Request], Response]


def html_page(title: str, body: str = "") -> bytes:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def searx_result(
    url: str,
    title: str,
    content: str = "",
    *,
    engine: str = "test",
    score: float = 1.0,
    published: str | None = None,
) -> dict[str, Any]:
    """One result in SearXNG's JSON format."""
    return {
        "url": url,
        "title": title,
        "content": content,
        "engine": engine,
        "score": score,
        "publishedDate": published,
    }


def gzip_stream(decoded_size: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """A gzip body of `decoded_size` zero bytes, compressed as it is sent (a bomb of any size
    costs the server one chunk of memory)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(chunk)
    left = decoded_size
    while left > 0:
        piece = compressor.compress(zeros[: min(chunk, left)])
        left -= min(chunk, left)
        if piece:
            yield piece
    yield compressor.flush()


class WebServer:
    def __init__(self, *, tls: bool = False, http2: bool = False, names: Iterable[str] = ()) -> None:
        self.http2 = http2
        if http2 and not tls:
            raise ValueError("HTTP/2 is served over TLS only (ALPN), as browsers and httpx use it")
        self.routes: dict[str, Route] = {}
        self.prefix_routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        self.sni_names: list[str | None] = []
        self.stopping = threading.Event()  # slow and endless answers give up when set
        self._lock = threading.Lock()
        self._tls = self._server_context(tuple(names)) if tls else None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.scheme = "https" if tls else "http"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="webserver", daemon=True
        )
        self._thread.start()

    # -- lifetime

    def close(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def __enter__(self) -> WebServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- addresses and records

    def url(self, path: str = "/", *, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def requests_to(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- routes

    def route(self, path: str, handler: Route, *, prefix: bool = False) -> str:
        (self.prefix_routes if prefix else self.routes)[path] = handler
        return self.url(path)

    def find(self, path: str) -> Route | None:
        if path in self.routes:
            return self.routes[path]
        matches = [p for p in self.prefix_routes if path.startswith(p)]
        return self.prefix_routes[max(matches, key=len)] if matches else None

    def page(
        self,
        path: str,
        body: bytes | str,
        *,
        content_type: str | None = "text/html; charset=utf-8",
        status: int = 200,
        headers: Iterable[tuple[str, str]] = (),
    ) -> str:
        """A fixed answer; content_type None sends no Content-Type at all."""
        data = body.encode() if isinstance(body, str) else body
        fixed = [("Content-Type", content_type)] if content_type else []
        fixed += list(headers)
        return self.route(path, lambda _: Response(status, list(fixed), data))

    def status(self, path: str, status: int, body: bytes | str = b"", **kwargs: Any) -> str:
        return self.page(path, body, status=status, **kwargs)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        """A redirect to `location` as given: relative, another host, a private address..."""
        return self.route(path, lambda _: Response(status, [("Location", location)]))

    def redirect_chain(self, path: str, hops: int, final: str, status: int = 302) -> str:
        """`path` -> path/1 -> ... -> path/<hops-1> -> final: `hops` redirects in all."""
        steps = [path] + [f"{path}/{n}" for n in range(1, hops)]
        for here, there in zip(steps, [*steps[1:], final], strict=True):
            self.redirect(here, there, status)
        return self.url(path)

    def slow(self, path: str, seconds: float, body: bytes | str = b"<p>late</p>", **kwargs: Any) -> str:
        """Answers after `seconds` (given up early when the server closes)."""
        self.page(path, body, **kwargs)
        fixed = self.routes[path]

        def late(request: Request) -> Response:
            answer = fixed(request)
            answer.delay = seconds
            return answer

        return self.route(path, late)

    def endless(
        self,
        path: str,
        *,
        chunk: bytes = b"<p>" + b"x" * 65536 + b"</p>",
        interval: float = 0.0,
        content_type: str = "text/html",
    ) -> str:
        """A body that never ends: `chunk` every `interval` seconds until the client leaves."""

        def forever(_: Request) -> Response:
            def chunks() -> Iterator[bytes]:
                while not self.stopping.is_set():
                    yield chunk
                    if interval:
                        self.stopping.wait(interval)

            return Response(200, [("Content-Type", content_type)], chunks())

        return self.route(path, forever)

    def gzip_bomb(self, path: str, decoded_size: int = 10_000_000, content_type: str = "text/html") -> str:
        """`decoded_size` zero bytes, gzipped once when the route is added (10 MB -> ~10 KB)."""
        packed = gzip.compress(bytes(decoded_size), 9)
        headers = [("Content-Type", content_type), ("Content-Encoding", "gzip")]
        return self.route(path, lambda _: Response(200, headers, packed))

    def streamed_gzip_bomb(
        self, path: str, decoded_size: int = 1 << 30, content_type: str = "text/html"
    ) -> str:
        """`decoded_size` zero bytes gzipped while sent (1 GiB by default), chunked."""
        headers = [("Content-Type", content_type), ("Content-Encoding", "gzip")]
        return self.route(path, lambda _: Response(200, headers, gzip_stream(decoded_size)))

    def encoded(self, path: str, body: bytes, coding: str, content_type: str = "text/html") -> str:
        """`body` sent with the given Content-Encoding, encoded here when known (gzip, deflate
        zlib-wrapped, raw-deflate sent as "deflate"), else sent as is."""
        if coding == "gzip":
            data = gzip.compress(body)
        elif coding == "deflate":
            data = zlib.compress(body)
        elif coding == "raw-deflate":
            packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
            data, coding = packer.compress(body) + packer.flush(), "deflate"
        else:
            data = body
        headers = [("Content-Type", content_type), ("Content-Encoding", coding)]
        return self.route(path, lambda _: Response(200, headers, data))

    def set_cookie(
        self, path: str, cookie: str = "session=secret; Path=/", body: str = "<p>cookie</p>"
    ) -> str:
        return self.page(path, body, headers=[("Set-Cookie", cookie)])

    def challenge(self, path: str, kind: str = "cloudflare", status: int = 403) -> str:
        """A bot challenge: "cloudflare" (cf-mitigated header and "Just a moment..."), "title"
        ("Attention Required! | Cloudflare", no header) or "captcha" (a reCAPTCHA form)."""
        if kind == "cloudflare":
            return self.page(
                path,
                html_page("Just a moment...", "<div id='challenge'>Checking...</div>"),
                status=status,
                headers=[("cf-mitigated", "challenge"), ("Server", "cloudflare")],
            )
        if kind == "title":
            return self.page(path, html_page("Attention Required! | Cloudflare"), status=status)
        if kind == "captcha":
            body = html_page("Access check", "<form><div class='g-recaptcha' data-sitekey='k'></div></form>")
            return self.page(path, body, status=status)
        raise ValueError(f"unknown challenge kind {kind!r}")

    def folder(self, prefix: str, directory: Path) -> str:
        """Files under `directory` at prefix/<relative path>, typed by their suffix."""
        root = directory.resolve()

        def serve(request: Request) -> Response:
            target = (root / request.path[len(prefix) :].lstrip("/")).resolve()
            if not target.is_file() or not target.is_relative_to(root):
                return Response(404, [("Content-Type", "text/plain")], b"not found")
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if kind.startswith("text/"):
                kind += "; charset=utf-8"
            return Response(200, [("Content-Type", kind)], target.read_bytes())

        return self.route(prefix, serve, prefix=True)

    def searxng(
        self,
        results: list[dict[str, Any]] | Callable[[str], list[dict[str, Any]]],
        path: str = "/search",
    ) -> str:
        """SearXNG's JSON API: GET path?q=...&format=json -> {"query", "results": [...]}; a
        callable computes the results from the query. Without format=json, 403 as SearXNG does
        when JSON is off."""

        def search(request: Request) -> Response:
            query = request.query.get("q", [""])[0]
            if request.query.get("format", [""])[0] != "json":
                return Response(403, [("Content-Type", "text/html")], b"<h1>403 Forbidden</h1>")
            found = results(query) if callable(results) else results
            payload = {"query": query, "number_of_results": len(found), "results": found}
            return Response(200, [("Content-Type", "application/json")], json.dumps(payload).encode())

        return self.route(path, search)

    def answer(
        self,
        method: str,
        target: str,
        header_items: Iterable[tuple[str, str]],
        peer: Any,
        version: str = "HTTP/1.1",
    ) -> Response:
        """Record the request and run its route (either protocol)."""
        started = time.monotonic()
        split = urlsplit(target)
        headers: dict[str, str] = {}
        for name, value in header_items:
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        request = Request(
            method=method,
            path=split.path,
            query=parse_qs(split.query),
            headers=headers,
            host=headers.get("host", headers.get(":authority", "")),
            started=started,
            target=target,
            peer=tuple(peer[:2]),
            version=version,
        )
        self.record(request)
        route = self.find(split.path)
        return route(request) if route else Response(404, [("Content-Type", "text/plain")], b"no route")

    # -- TLS

    def _server_context(self, names: tuple[str, ...]) -> ssl.SSLContext:
        import ssl

        import trustme

        self.ca = trustme.CA()
        cert = self.ca.issue_cert(*dict.fromkeys((*TLS_NAMES, *names)))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(context)
        context.set_alpn_protocols(["h2", "http/1.1"] if self.http2 else ["http/1.1"])

        def sni(_sock: Any, name: str | None, _context: Any) -> None:
            with self._lock:
                self.sni_names.append(name)

        context.sni_callback = sni
        return context

    def client_ssl_context(self) -> ssl.SSLContext:
        import ssl

        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context


def _handler_for(server: WebServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: without this, Nagle's algorithm holds the
        # body for the client's delayed ACK, about 40 ms per answer.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            self.broken = False
            if server._tls is not None:  # the handshake runs in this connection's thread
                try:
                    self.request = server._tls.wrap_socket(self.request, server_side=True)
                except OSError:  # ssl.SSLError included: the client refused our certificate
                    self.broken = True
            super().setup()

        def handle(self) -> None:
            if self.broken:
                return
            # The client may go away at any time (a cap reached, a timeout, a refused certificate).
            with contextlib.suppress(OSError):
                if server._tls is not None and self.request.selected_alpn_protocol() == "h2":
                    _H2Session(server, self.request, self.client_address).serve()
                else:
                    super().handle()

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            answer = server.answer(self.command, self.path, self.headers.items(), self.client_address)
            if answer.delay and server.stopping.wait(answer.delay):
                self.close_connection = True
                return
            self._send(answer)

        def _send(self, answer: Response) -> None:
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            if isinstance(answer.body, bytes | bytearray):
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in answer.body:
                if piece:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")

    return Handler


class _H2Session:
    """One HTTP/2 connection (h2's state machine over the TLS socket): requests are answered one
    after another, each body sent within the peer's flow-control window."""

    def __init__(self, server: WebServer, sock: Any, peer: Any) -> None:
        import h2.config
        import h2.connection

        self.server, self.sock, self.peer = server, sock, peer
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        self.waiting: list[Any] = []  # requests that arrived while a body was being sent
        self.reset: set[int] = set()  # streams the client gave up on
        self.closed = False

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def pump(self) -> None:
        """Read once from the socket and take note of what happened."""
        import h2.events

        data = self.sock.recv(65536)
        if not data:
            self.closed = True
            return
        for event in self.conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                self.waiting.append(event)
            elif isinstance(event, h2.events.StreamReset):
                self.reset.add(event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.closed = True
        self.flush()

    def serve(self) -> None:
        import h2.exceptions

        self.conn.initiate_connection()
        self.flush()
        with contextlib.suppress(h2.exceptions.H2Error):  # a client that broke off mid-stream
            while not self.closed and not self.server.stopping.is_set():
                if not self.waiting:
                    self.pump()
                    continue
                self.respond(self.waiting.pop(0))

    def respond(self, event: Any) -> None:
        sid = event.stream_id
        headers = [
            (n.decode() if isinstance(n, bytes) else n, v.decode() if isinstance(v, bytes) else v)
            for n, v in event.headers
        ]
        pseudo = dict(h for h in headers if h[0].startswith(":"))
        answer = self.server.answer(
            pseudo.get(":method", "GET"), pseudo.get(":path", "/"), headers, self.peer, "HTTP/2"
        )
        if answer.delay and self.server.stopping.wait(answer.delay):
            return
        fields = [(":status", str(answer.status))] + [(n.lower(), v) for n, v in answer.headers]
        if isinstance(answer.body, bytes | bytearray):
            fields.append(("content-length", str(len(answer.body))))
        self.conn.send_headers(sid, fields)
        self.flush()
        for piece in [answer.body] if isinstance(answer.body, bytes | bytearray) else answer.body:
            while piece:
                if sid in self.reset or self.closed:
                    return
                room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
                if room <= 0:
                    self.pump()  # wait for a WINDOW_UPDATE
                    continue
                self.conn.send_data(sid, piece[:room])
                piece = piece[room:]
                self.flush()
        self.conn.end_stream(sid)
        self.flush()
