"""groundhog's network layer against a real server on 127.0.0.1 (webserver.py): statuses, the
address policy on every connection (redirect hops included) and without a second DNS lookup,
bounded decoding of gzip bombs, redirects, cookies, pacing, timeouts, get_json (trusted for the
operator's own provider), successive event loops, and TLS that still names the host. No mocks of
httpx: only the resolver is injected, for names the system cannot resolve. The pure rules
(addresses.py, bodies.py, statuses.py) are tested here too, through their own modules."""

from __future__ import annotations

import asyncio
import gc
import gzip
import ipaddress
import re
import time
import tracemalloc
import zlib
from collections.abc import Iterator, Sequence

import anyio
import pytest

from lynxc.runtime.backends.groundhog import network
from lynxc.runtime.backends.groundhog.addresses import (
    address_kind,
    address_problem,
    address_refusal,
    parse_networks,
    refuse_url,
)
from lynxc.runtime.backends.groundhog.bodies import BoundedBody, media_type
from lynxc.runtime.backends.groundhog.network import Fetcher, FetchError, FetchPolicy
from lynxc.runtime.backends.groundhog.statuses import challenge_reason
from tests.runtime.backends.groundhog.webserver import Response, WebServer, html_page, searx_result

pytestmark = pytest.mark.anyio

LOCAL = ("127.0.0.1/32",)
PAGE = html_page("An article", "<h1>Heading</h1><p>Some text worth reading.</p>")


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


class Names:
    """A resolver for names the system cannot resolve (.test): each host's answers in order,
    the last one repeated; every call recorded."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        answers = self.table.get(host)
        if answers is None:
            raise OSError(-2, "Name or service not known")
        return answers[min(self.calls.count(host), len(answers)) - 1]


async def fetch(url: str, *, deadline: float | None = None, resolver: Names | None = None, **policy):
    fetcher = Fetcher(FetchPolicy(**{"allowed_networks": LOCAL, **policy}), resolver=resolver)
    try:
        return await fetcher.fetch(url, deadline=deadline)
    finally:
        await fetcher.aclose()


# ---------------------------------------------------------------- the URL and address rules


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://example.com/a?b=c#d", None),
        ("http://example.com:8080/", None),
        ("HTTP://EXAMPLE.COM/", None),
        ("ftp://example.com/file", "scheme 'ftp' is not allowed"),
        ("file:///etc/passwd", "scheme 'file' is not allowed"),
        ("javascript:alert(1)", "scheme 'javascript' is not allowed"),
        ("data:text/html,<p>x</p>", "scheme 'data' is not allowed"),
        ("gopher://127.0.0.1:25/", "scheme 'gopher' is not allowed"),
        ("example.com/page", "no scheme"),
        ("http:///path", "no host"),
        ("http://user:secret@example.com/", "credentials in the URL"),
        ("http://user@example.com/", "credentials in the URL"),
        ("http://example.com/\r\nX-Injected: 1", "control characters"),
        ("", "empty URL"),
        ("http://example.com/" + "a" * 9000, "longer than 8192"),
        ("http://example.com:99999/", "port 99999 is out of range"),
        ("http://[::1/", "not a valid URL"),
        ("http://xn--.com/", "not a valid URL: the host name is not valid IDNA"),
        ("http://xn--a.com/", "not a valid URL: the host name is not valid IDNA"),
        ("http://./", "no host"),
        ("http://example.com./", None),  # fully qualified: the same name
    ],
)
def test_refuse_url(url: str, problem: str | None) -> None:
    found = refuse_url(url)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("93.184.215.14", None),
        ("8.8.8.8", None),
        ("2606:4700::6810:84e5", None),
        ("127.0.0.1", "a loopback address"),
        ("127.255.0.9", "a loopback address"),
        ("10.0.0.1", "a private address"),
        ("172.31.255.255", "a private address"),
        ("192.168.1.1", "a private address"),
        ("100.64.0.1", "a shared (CGNAT) address"),
        ("100.127.255.254", "a shared (CGNAT) address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("169.254.1.1", "a link-local address"),
        ("0.0.0.0", "an unspecified address"),
        ("0.1.2.3", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("239.255.255.250", "a multicast address"),
        ("255.255.255.255", "a broadcast address"),
        ("240.0.0.1", "a reserved address"),
        ("192.0.2.10", "a reserved address"),
        ("198.18.0.1", "a reserved address"),
        ("::1", "a loopback address"),
        ("::", "an unspecified address"),
        ("fe80::1", "a link-local address"),
        ("fe80::1%eth0", "a link-local address"),
        ("fc00::1", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("fec0::1", "a private address"),
        ("ff02::1", "a multicast address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("2001:db8::1", "a reserved address"),
        ("::ffff:127.0.0.1", "a loopback address (IPv4-mapped 127.0.0.1)"),
        ("::ffff:10.1.2.3", "a private address (IPv4-mapped 10.1.2.3)"),
        ("::ffff:169.254.169.254", "a cloud metadata address (IPv4-mapped 169.254.169.254)"),
        ("::ffff:8.8.8.8", None),
        ("::127.0.0.1", "an IPv4-compatible address (deprecated)"),
        ("::8.8.8.8", "an IPv4-compatible address (deprecated)"),
        ("2002:7f00:1::1", "a loopback address (6to4 of 127.0.0.1)"),
        ("2002:a9fe:a9fe::", "a cloud metadata address (6to4 of 169.254.169.254)"),
        ("2002:808:808::1", None),
        ("64:ff9b::7f00:1", "a loopback address (NAT64 of 127.0.0.1)"),
        ("64:ff9b::a00:1", "a private address (NAT64 of 10.0.0.1)"),
        ("64:ff9b::808:808", None),
        ("64:ff9b:1::1", "a private address"),
        ("2001::1", "a reserved address"),  # Teredo
    ],
)
def test_address_kind(address: str, kind: str | None) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


def test_allowed_networks_open_exactly_their_addresses() -> None:
    allowed = parse_networks(("127.0.0.1/32", "fd00::/64"))
    assert address_problem("127.0.0.1", allowed) is None
    assert address_problem("::ffff:127.0.0.1", allowed) is None  # the same socket peer
    assert address_problem("127.0.0.2", allowed) == "a loopback address"
    assert address_problem("::1", allowed) == "a loopback address"
    assert address_problem("fd00::5", allowed) is None
    assert address_problem("fd00:1::5", allowed) == "a private address"
    assert address_problem("10.0.0.1") == "a private address"


def test_no_range_opens_a_cloud_metadata_address_only_the_address_itself() -> None:
    link_local = parse_networks(("169.254.0.0/16", "fd00::/16", "64:ff9b::/96", "2002::/16"))
    assert address_problem("169.254.1.1", link_local) is None  # the range still opens the rest
    assert address_problem("fd00:ec2::1", link_local) is None
    for metadata in (
        "169.254.169.254",
        "::ffff:169.254.169.254",
        "fd00:ec2::254",
        "64:ff9b::a9fe:a9fe",  # NAT64 of it
        "2002:a9fe:a9fe::1",  # 6to4 of it
    ):
        assert address_problem(metadata, link_local) is not None, metadata
        assert "cloud metadata" in address_problem(metadata, link_local), metadata
    exact = parse_networks(("169.254.169.254/32", "fd00:ec2::254/128"))
    assert address_problem("169.254.169.254", exact) is None
    assert address_problem("::ffff:169.254.169.254", exact) is None  # the same socket peer
    assert address_problem("fd00:ec2::254", exact) is None
    assert address_problem("169.254.169.253", exact) == "a link-local address"


@pytest.mark.parametrize(
    ("host", "address", "refusal"),
    [
        ("10.1.2.3", "10.1.2.3", "10.1.2.3 is a private address"),
        ("::ffff:10.1.2.3", "::ffff:10.1.2.3", "::ffff:10.1.2.3 is a private address (IPv4-mapped 10.1.2.3)"),
        ("[::1]", "::1", "::1 is a loopback address"),
        # A name: the answer is the internal network's, not the URL's, and is not shown.
        ("intranet.example", "10.1.2.3", "intranet.example resolves to a private address"),
        ("intranet.example", "::ffff:10.1.2.3", "intranet.example resolves to a private address"),
        ("six.example", "64:ff9b::a00:1", "six.example resolves to a private address"),
        ("meta.example", "169.254.169.254", "meta.example resolves to a cloud metadata address"),
        ("2130706434", "127.0.0.2", "2130706434 resolves to a loopback address"),
        ("public.example", "93.184.215.14", None),
        ("local.example", "127.0.0.1", None),  # allowed below
    ],
)
def test_a_refusal_shows_the_address_only_when_the_url_gave_it(
    host: str, address: str, refusal: str | None
) -> None:
    assert address_refusal(host, address, parse_networks(LOCAL)) == refusal


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("localhost", r"allowed_networks: 'localhost' is not an IP network"),
        ("10.0.0.0/33", r"allowed_networks: '10.0.0.0/33' is not an IP network"),
        (
            "127.0.0.1/1",
            r"allowed_networks: '127.0.0.1/1' has host bits set \(as a network it would be 0\.0\.0\.0/1, "
            r"far more than meant\): write the network's first address, or '127\.0\.0\.1/32' for one address",
        ),
        ("10.1.2.3/8", r"'10.1.2.3/8' has host bits set .* or '10\.1\.2\.3/32'"),
        ("fd00::1/64", r"'fd00::1/64' has host bits set .* or 'fd00::1/128'"),
        ("0.0.0.0/0", r"allowed_networks: '0.0.0.0/0' is too wide: a range may be at most a /8 for IPv4"),
        ("::/0", r"'::/0' is too wide: a range may be at most a /16 for IPv6"),
        ("0.0.0.0/1", r"'0.0.0.0/1' is too wide"),
        ("10.0.0.0/7", r"'10.0.0.0/7' is too wide"),
        ("fc00::/7", r"'fc00::/7' is too wide"),
    ],
)
def test_allowed_networks_refuse_host_bits_and_wide_ranges(entry: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_networks((entry,))
    with pytest.raises(ValueError, match=message):  # how the settings reach it
        FetchPolicy(allowed_networks=("127.0.0.1/32", entry))


def test_allowed_networks_accept_exact_networks_up_to_the_widest() -> None:
    entries = (" 127.0.0.1 ", "10.0.0.0/8", "10.0.0.0/255.0.0.0", "fd00::/16", "::1", "fe80::/10")
    assert [str(n) for n in parse_networks(entries[:5])] == [
        "127.0.0.1/32",
        "10.0.0.0/8",
        "10.0.0.0/8",
        "fd00::/16",
        "::1/128",
    ]
    with pytest.raises(ValueError, match="'fe80::/10' is too wide"):
        parse_networks(entries)


def test_policy_names_the_field_and_the_rule() -> None:
    with pytest.raises(ValueError, match=r"allowed_networks: 'localhost' is not an IP network"):
        FetchPolicy(allowed_networks=("localhost",))
    with pytest.raises(ValueError, match="max_bytes: must be at least 1"):
        FetchPolicy(max_bytes=0)
    with pytest.raises(ValueError, match="timeout_seconds"):
        FetchPolicy(timeout_seconds=0)
    with pytest.raises(ValueError, match="per_domain_interval"):
        FetchPolicy(per_domain_interval=-1)


def test_the_rules_stay_importable_from_network() -> None:
    """The other modules import these names from network.py, where they lived before the split."""
    for name in network.__all__:
        assert hasattr(network, name), name
    assert network.refuse_url is refuse_url and network.challenge_reason is challenge_reason
    assert network.parse_networks is parse_networks and network.media_type is media_type


def test_media_type_and_charset() -> None:
    assert media_type('Text/HTML; Charset="UTF-8"') == ("text/html", "utf-8")
    assert media_type("application/pdf") == ("application/pdf", None)
    assert media_type(None) == (None, None)


CF_SCRIPT = "<script src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1'></script>"


def test_challenge_recognised_from_header_title_or_captcha_on_403_503() -> None:
    assert challenge_reason(200, {"cf-mitigated": "challenge"}, b"")
    assert challenge_reason(404, {"cf-mitigated": " Challenge "}, b"")
    # 403 and 503, the statuses interstitials come with: a title starting like one, or a captcha.
    assert challenge_reason(503, {}, html_page("Just a moment..."))
    assert challenge_reason(403, {}, html_page("Security check"))
    assert challenge_reason(403, {}, b"<div class='g-recaptcha'></div>")
    assert challenge_reason(503, {}, b"<p>Please solve the captcha</p>")
    # A 200 needs an interstitial's exact title and a challenge's machinery in the body.
    assert challenge_reason(200, {}, html_page("Just a moment...", CF_SCRIPT)) == (
        "challenge page (title 'Just a moment...' with 'challenge-platform')"
    )
    assert challenge_reason(200, {}, html_page("Attention Required! | Cloudflare", "<div id='cf-challenge'>"))
    assert challenge_reason(200, {}, html_page("DDoS-Guard", "<script src='/.well-known/ddos-guard/js'>"))
    assert challenge_reason(
        200, {}, html_page("Just a moment...", "<form action='/verify' id='captcha-form'>")
    )
    assert challenge_reason(200, {}, html_page("  just a   MOMENT...  ", "<div class='h-captcha'>"))
    # A captcha mentioned in an ordinary page is not a challenge.
    assert challenge_reason(200, {}, b"<p>How a captcha works</p>") is None
    assert challenge_reason(404, {}, b"<p>captcha</p>") is None


@pytest.mark.parametrize(
    "title",
    [
        "Just a moment: why patience pays",
        "Attention required: the attention economy explained",
        "Security check-ups for small websites",
        "DDoS-Guard review: does it stop attacks?",
    ],
)
def test_an_article_titled_like_a_challenge_is_a_page(title: str) -> None:
    # Even an article on challenges, naming their machinery, and one titled exactly like one.
    body = (
        f"<p>Cloudflare serves a cf-challenge through challenge-platform; a g-recaptcha form.</p>{CF_SCRIPT}"
    )
    assert challenge_reason(200, {}, html_page(title, body)) is None
    assert challenge_reason(200, {}, html_page(title)) is None
    assert challenge_reason(404, {}, html_page(title, body)) is None
    for exact in ("Just a moment...", "Attention Required! | Cloudflare", "DDoS-Guard"):
        assert challenge_reason(200, {}, html_page(exact, "<p>An essay on waiting.</p>")) is None


async def test_articles_titled_like_challenges_are_fetched_ok(web: WebServer) -> None:
    titles = ("Just a moment", "Attention required", "Security check", "DDoS-Guard")
    for n, title in enumerate(titles):
        web.page(f"/{n}", html_page(f"{title} - a field guide", "<p>Worth reading, captcha and all.</p>"))
    web.page("/real", html_page("Just a moment...", CF_SCRIPT))
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL))
    try:
        for n in range(len(titles)):
            got = await fetcher.fetch(web.url(f"/{n}"))
            assert (got.status, got.error) == ("ok", None), titles[n]
        got = await fetcher.fetch(web.url("/real"))
        assert got.status == "challenge" and "challenge-platform" in got.error
    finally:
        await fetcher.aclose()


def test_bounded_body_decodes_every_coding_and_stops_at_the_cap() -> None:
    text = b"hello world " * 1000
    for coding, data in [
        (None, text),
        ("gzip", gzip.compress(text)),
        ("gzip", gzip.compress(text[:5000]) + gzip.compress(text[5000:])),  # two members
        ("deflate", zlib.compress(text)),
        ("deflate", zlib.compress(text)[2:-4]),  # raw deflate, as some servers send it
    ]:
        body = BoundedBody(coding, len(text))
        assert all(body.feed(data[i : i + 777]) for i in range(0, len(data), 777))
        assert body.body() == text
        over = BoundedBody(coding, len(text) - 1)
        assert not all(over.feed(data[i : i + 777]) for i in range(0, len(data), 777))


# ---------------------------------------------------------------- pages and statuses


async def test_a_page_is_fetched_with_its_type_and_a_receipt(web: WebServer) -> None:
    url = web.page("/article", PAGE, content_type="text/html; charset=ISO-8859-1")
    got = await fetch(url)
    assert (got.status, got.http_status, got.error) == ("ok", 200, None)
    assert (got.content_type, got.charset, got.body) == ("text/html", "iso-8859-1", PAGE)
    assert (got.url, got.final_url, got.redirects) == (url, url, ())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", got.fetched_at)
    (seen,) = web.requests_to("/article")
    assert seen.headers["user-agent"].startswith("lynxc-groundhog/")
    assert seen.headers["accept-encoding"] == "gzip, deflate"  # only what is decoded under the cap
    assert "cookie" not in seen.headers


def route_for(web: WebServer, name: str) -> str:
    """Each status case as a route on the server."""
    cases = {
        "plain": lambda: web.page("/p", "just text", content_type="text/plain"),
        "markdown": lambda: web.page("/p", "# Title\n\ntext", content_type="text/markdown; charset=utf-8"),
        "xhtml": lambda: web.page("/p", PAGE, content_type="application/xhtml+xml"),
        "pdf": lambda: web.page("/p", b"%PDF-1.4\n...", content_type="application/pdf"),
        "untyped-html": lambda: web.page("/p", PAGE, content_type=None),
        "untyped-pdf": lambda: web.page("/p", b"%PDF-1.7 ...", content_type=None),
        "untyped-binary": lambda: web.page("/p", b"\x00\x01\x02binary", content_type=None),
        "empty": lambda: web.page("/p", b""),
        "blank": lambda: web.page("/p", b"  \n\t "),
        "no-content": lambda: web.status("/p", 204),
        "404": lambda: web.status("/p", 404, html_page("Not found")),
        "410": lambda: web.status("/p", 410),
        "429": lambda: web.status("/p", 429, headers=[("Retry-After", "30")]),
        "401": lambda: web.status("/p", 401),
        "403": lambda: web.status("/p", 403, html_page("Forbidden")),
        "451": lambda: web.status("/p", 451),
        "500": lambda: web.status("/p", 500),
        "502": lambda: web.status("/p", 502),
        "503": lambda: web.status("/p", 503, html_page("Down for maintenance")),
        "418": lambda: web.status("/p", 418),
        "cloudflare": lambda: web.challenge("/p", "cloudflare", 403),
        "cloudflare-200": lambda: web.challenge("/p", "cloudflare", 200),
        "title-503": lambda: web.challenge("/p", "title", 503),
        "captcha-403": lambda: web.challenge("/p", "captcha", 403),
        "captcha-503": lambda: web.challenge("/p", "captcha", 503),
        "json": lambda: web.page("/p", '{"a": 1}', content_type="application/json"),
        "image": lambda: web.page("/p", b"\x89PNG...", content_type="image/png"),
        "brotli": lambda: web.encoded("/p", b"\x8b\x02\x80hello\x03", "br"),
        "stacked": lambda: web.encoded("/p", gzip.compress(gzip.compress(PAGE)), "gzip, gzip"),
        "gzip": lambda: web.encoded("/p", PAGE, "gzip"),
        "deflate": lambda: web.encoded("/p", PAGE, "deflate"),
        "raw-deflate": lambda: web.encoded("/p", PAGE, "raw-deflate"),
    }
    return cases[name]()


@pytest.mark.parametrize(
    ("case", "status", "error"),
    [
        ("plain", "ok", None),
        ("markdown", "ok", None),
        ("xhtml", "ok", None),
        ("pdf", "ok", None),
        ("untyped-html", "ok", None),
        ("untyped-pdf", "ok", None),
        ("untyped-binary", "unsupported_content", "no Content-Type"),
        ("empty", "empty", "HTTP 200 OK with an empty body"),
        ("blank", "empty", "empty body"),
        ("no-content", "empty", "HTTP 204"),
        ("404", "not_found", "HTTP 404 Not Found"),
        ("410", "not_found", "HTTP 410 Gone"),
        ("429", "rate_limited", "HTTP 429 Too Many Requests (Retry-After: 30)"),
        ("401", "blocked", "HTTP 401"),
        ("403", "blocked", "HTTP 403 Forbidden"),
        ("451", "blocked", "HTTP 451"),
        ("500", "server_error", "HTTP 500"),
        ("502", "server_error", "HTTP 502"),
        ("503", "server_error", "HTTP 503"),
        ("418", "unknown", "HTTP 418"),
        ("cloudflare", "challenge", "cf-mitigated"),
        ("cloudflare-200", "challenge", "cf-mitigated"),
        ("title-503", "challenge", "Attention Required"),
        ("captcha-403", "challenge", "g-recaptcha"),
        ("captcha-503", "challenge", "g-recaptcha"),
        ("json", "unsupported_content", "media type application/json is not read"),
        ("image", "unsupported_content", "media type image/png"),
        ("brotli", "unsupported_content", "content encoding 'br' is not supported"),
        ("stacked", "unsupported_content", "stacked content encodings"),
        ("gzip", "ok", None),
        ("deflate", "ok", None),
        ("raw-deflate", "ok", None),
    ],
)
async def test_status_mapping(web: WebServer, case: str, status: str, error: str | None) -> None:
    got = await fetch(route_for(web, case))
    assert got.status == status, got.error
    if error is None:
        assert got.error is None and got.body
    else:
        assert got.error is not None and error in got.error
    # The body is kept for ok pages and, for reporting, challenges; never otherwise.
    assert bool(got.body) == (status in ("ok", "challenge"))
    if case in ("gzip", "deflate", "raw-deflate"):
        assert got.body == PAGE
    if case.startswith("untyped-") and status == "ok":
        assert got.content_type in ("text/html", "application/pdf")


# ---------------------------------------------------------------- size caps and bombs


async def peak_memory(coroutine) -> tuple[object, int]:
    """Await while tracing Python allocations (the server thread's included): the result and
    the peak traced size."""
    tracemalloc.start()
    try:
        return await coroutine, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_a_gzip_bomb_is_too_large_without_a_memory_spike(web: WebServer) -> None:
    url = web.gzip_bomb("/bomb", decoded_size=10_000_000)  # ~10 KB on the wire
    got, peak = await peak_memory(fetch(url, max_bytes=1_000_000))
    assert got.status == "too_large" and got.body == b""
    assert got.error == "body larger than 1000000 bytes (decoded)"
    assert peak < 64 * 1024 * 1024


async def test_a_streamed_one_gigabyte_gzip_bomb_is_too_large(web: WebServer) -> None:
    url = web.streamed_gzip_bomb("/big-bomb", decoded_size=1 << 30)
    got, peak = await peak_memory(fetch(url))  # the default 5 MB cap
    assert got.status == "too_large"
    assert peak < 64 * 1024 * 1024


async def test_a_body_at_the_cap_is_read_one_byte_over_is_too_large(web: WebServer) -> None:
    exact = web.page("/exact", b"x" * 1000)
    over = web.page("/over", b"x" * 1001)
    zipped = web.encoded("/zipped-over", b"x" * 1001, "gzip")
    assert (await fetch(exact, max_bytes=1000)).status == "ok"
    assert (await fetch(over, max_bytes=1000)).status == "too_large"
    assert (await fetch(zipped, max_bytes=1000)).status == "too_large"


async def test_an_endless_body_ends_too_large_and_a_dripping_one_times_out(web: WebServer) -> None:
    fast = web.endless("/endless")
    drip = web.endless("/drip", chunk=b"<p>x</p>", interval=0.05)
    got = await fetch(fast, max_bytes=2_000_000)
    assert got.status == "too_large"
    got = await fetch(drip, timeout_seconds=0.5)
    assert (got.status, got.error) == ("timeout", "timed out after 0.5 s")


# ---------------------------------------------------------------- redirects


async def test_redirects_are_followed_and_recorded(web: WebServer) -> None:
    final = web.page("/final", PAGE)
    start = web.redirect_chain("/r", 3, "/final")  # relative Locations
    got = await fetch(start)
    assert (got.status, got.url, got.final_url) == ("ok", start, final)
    assert got.redirects == (web.url("/r/1"), web.url("/r/2"), final)
    assert len(web.requests_to("/final")) == 1


async def test_too_many_redirects_is_a_redirect_error(web: WebServer) -> None:
    web.page("/final", PAGE)
    start = web.redirect_chain("/r", 3, "/final")
    assert (await fetch(start, max_redirects=3)).status == "ok"
    got = await fetch(start, max_redirects=2)
    assert (got.status, got.error) == ("redirect_error", "too many redirects (more than 2)")
    assert got.final_url == web.url("/r/2") and got.http_status == 302
    assert len(web.requests_to("/final")) == 1  # only the first fetch got there
    loop = web.redirect("/loop", "/loop", 301)
    got = await fetch(loop)
    assert (got.status, got.error) == ("redirect_error", "too many redirects (more than 5) (a loop)")
    bad = web.redirect("/bad", "http://xn--.com/")  # a Location whose host is no name: refused
    got = await fetch(bad)
    assert got.status == "blocked" and "not valid IDNA" in got.error
    broken = web.redirect("/broken", "http://[::1")  # a Location that is no URL at all
    got = await fetch(broken)
    assert got.status == "redirect_error" and got.error.startswith("invalid redirect Location 'http://[::1'")


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ("http://10.0.0.1/admin", "refused: 10.0.0.1 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "refused: 169.254.169.254 is a cloud metadata address"),
        ("http://[::1]:{port}/final", "refused: ::1 is a loopback address"),
        ("http://127.0.0.2:{port}/final", "refused: 127.0.0.2 is a loopback address"),
        ("http://[::ffff:10.0.0.1]/", "refused: ::ffff:10.0.0.1 is a private address (IPv4-mapped 10.0.0.1)"),
        ("http://metadata.test/", "refused: metadata.test resolves to a cloud metadata address"),
        ("file:///etc/passwd", "refused: redirect to file:///etc/passwd: scheme 'file' is not allowed"),
        ("http://user:pw@127.0.0.1:{port}/final", "credentials in the URL are not allowed"),
    ],
)
async def test_a_redirect_hop_to_a_refused_address_is_blocked(
    web: WebServer, location: str, error: str
) -> None:
    web.page("/final", PAGE)
    start = web.redirect("/go", location.format(port=web.port))
    names = Names({"metadata.test": [["169.254.169.254"]]})
    got = await fetch(start, resolver=names)
    assert got.status == "blocked" and got.error.startswith("refused: ")
    assert error in got.error, got.error
    assert got.final_url == got.redirects[-1] if got.redirects else got.final_url == start
    assert web.requests_to("/final") == []


# ---------------------------------------------------------------- addresses and DNS


async def test_loopback_is_refused_unless_allowed(web: WebServer) -> None:
    url = web.page("/a", PAGE)
    got = await fetch(url, allowed_networks=())
    assert (got.status, got.error) == ("blocked", "refused: 127.0.0.1 is a loopback address")
    assert web.requests == []
    assert (await fetch(url)).status == "ok"


async def test_a_name_resolving_to_loopback_is_refused_unless_allowed(web: WebServer) -> None:
    web.page("/a", PAGE)
    # The system resolver: localhost is 127.0.0.1 (and maybe ::1, never allowed here).
    got = await fetch(web.url("/a", host="localhost"), allowed_networks=())
    assert got.status == "blocked"
    assert got.error == "refused: localhost resolves to a loopback address"
    assert web.requests == []
    got = await fetch(web.url("/a", host="localhost"))
    assert got.status == "ok"
    # Numbers in other spellings are resolved like names, and the answer is what is checked.
    for spelling in ("2130706433", "0x7f.1", "127.1"):
        got = await fetch(web.url("/a", host=spelling), allowed_networks=())
        assert got.error == f"refused: {spelling} resolves to a loopback address"
    assert len(web.requests) == 1  # the allowed fetch's
    # An injected resolver: the same for any name.
    names = Names({"site.test": [["127.0.0.1"]]})
    got = await fetch(web.url("/a", host="site.test"), resolver=names, allowed_networks=())
    assert got.error == "refused: site.test resolves to a loopback address"
    assert (await fetch(web.url("/a", host="site.test"), resolver=names)).status == "ok"
    assert web.requests[-1].host == f"site.test:{web.port}"


async def test_a_fully_qualified_name_is_resolved_and_checked_as_the_name(web: WebServer) -> None:
    """ "localhost." (a trailing dot: the name written fully qualified) is localhost: refused as
    loopback unless allowed, reached when allowed; the system resolver alone would not find it."""
    web.page("/a", PAGE)
    got = await fetch(web.url("/a", host="localhost."), allowed_networks=())
    assert (got.status, got.error) == ("blocked", "refused: localhost. resolves to a loopback address")
    got = await fetch(web.url("/a", host="127.0.0.1."), allowed_networks=())
    assert (got.status, got.error) == ("blocked", "refused: 127.0.0.1. resolves to a loopback address")
    assert web.requests == []
    got = await fetch(web.url("/a", host="localhost."))
    assert (got.status, got.body) == ("ok", PAGE)
    names = Names({"site.test": [["127.0.0.1"]]})
    assert (await fetch(web.url("/a", host="site.test."), resolver=names)).status == "ok"
    assert names.calls == ["site.test"]


async def test_the_checked_address_is_the_one_connected_no_second_lookup(web: WebServer) -> None:
    """By construction: rebind.test exists only in the injected resolver, which answers
    127.0.0.1 once and a private address afterwards. The page is served, so the socket was
    opened to the checked number (the system cannot resolve the name at all), and the resolver
    was asked once, so no later answer could take the connection elsewhere."""
    web.page("/a", PAGE)
    names = Names({"rebind.test": [["127.0.0.1"], ["10.0.0.1"]]})
    got = await fetch(web.url("/a", host="rebind.test"), resolver=names)
    assert got.status == "ok"
    assert names.calls == ["rebind.test"]
    assert web.requests[0].host == f"rebind.test:{web.port}"  # HTTP still names the host


async def test_the_first_answer_is_the_one_checked(web: WebServer) -> None:
    web.page("/a", PAGE)
    names = Names({"rebind.test": [["10.0.0.1"], ["127.0.0.1"]]})
    got = await fetch(web.url("/a", host="rebind.test"), resolver=names)
    assert (got.status, got.error) == (
        "blocked",
        "refused: rebind.test resolves to a private address",  # the internal address unsaid
    )
    assert names.calls == ["rebind.test"] and web.requests == []


async def test_a_name_with_mixed_answers_is_reached_through_the_allowed_one_only(web: WebServer) -> None:
    web.page("/a", PAGE)
    names = Names({"mixed.test": [["10.0.0.1", "169.254.169.254", "127.0.0.1"]]})
    assert (await fetch(web.url("/a", host="mixed.test"), resolver=names)).status == "ok"


async def test_network_failures_say_which_not_raised(web: WebServer) -> None:
    closed = WebServer()
    closed.close()  # a port nobody listens on any more
    got = await fetch(closed.url("/"))
    assert got.status == "connection_error" and got.error.startswith("could not connect")
    got = await fetch(web.url("/", host="nowhere.test"), resolver=Names({}))
    assert (got.status, got.error) == ("dns_error", "cannot resolve nowhere.test: Name or service not known")
    got = await fetch("http://nowhere.invalid/")  # the system resolver: .invalid resolves nowhere
    assert got.status == "dns_error" and got.error.startswith("cannot resolve nowhere.invalid")
    got = await fetch("not a url")
    assert (got.status, got.error) == ("blocked", "refused: no scheme: give an absolute http or https URL")


# ---------------------------------------------------------------- the shared client, cookies


async def test_one_client_and_pool_serve_every_fetch(web: WebServer) -> None:
    web.page("/a", PAGE)
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL))
    try:
        for _ in range(3):
            assert (await fetcher.fetch(web.url("/a"))).status == "ok"
    finally:
        await fetcher.aclose()
        await fetcher.aclose()  # twice is fine
    assert len({r.peer for r in web.requests}) == 1  # one kept-alive connection


async def test_no_cookie_is_sent_back_to_any_host(web: WebServer) -> None:
    web.set_cookie("/login", "session=secret; Path=/")
    web.set_cookie("/wide", "wide=1; Domain=test; Path=/")
    web.page("/echo", PAGE)
    names = Names({"a.test": [["127.0.0.1"]], "b.test": [["127.0.0.1"]]})
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL), resolver=names)
    try:
        for url in ("/login", "/wide", "/echo"):
            assert (await fetcher.fetch(web.url(url, host="a.test"))).status == "ok"
        assert (await fetcher.fetch(web.url("/echo", host="b.test"))).status == "ok"
    finally:
        await fetcher.aclose()
    assert [r.host.split(":")[0] for r in web.requests] == ["a.test", "a.test", "a.test", "b.test"]
    assert all("cookie" not in r.headers for r in web.requests)


# ---------------------------------------------------------------- pacing and time


async def test_two_requests_to_one_host_start_an_interval_apart(web: WebServer) -> None:
    web.page("/a", PAGE)
    web.page("/b", PAGE)
    web.page("/c", PAGE)
    names = Names({"a.test": [["127.0.0.1"]], "c.test": [["127.0.0.1"]]})
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL, per_domain_interval=0.4), resolver=names)
    began = time.monotonic()
    try:
        got = await asyncio.gather(
            fetcher.fetch(web.url("/a", host="a.test")),
            fetcher.fetch(web.url("/b", host="a.test")),
            fetcher.fetch(web.url("/c", host="c.test")),
        )
    finally:
        await fetcher.aclose()
    assert [g.status for g in got] == ["ok", "ok", "ok"]
    (a,), (b,), (c,) = web.requests_to("/a"), web.requests_to("/b"), web.requests_to("/c")
    # Slots are reserved in call order: /b's is at least one interval after the first, which
    # was no earlier than `began`; another host does not queue behind them.
    assert a.started < b.started and b.started >= began + 0.4
    assert c.started < b.started


async def test_a_pacing_slot_after_the_deadline_fails_at_once(web: WebServer) -> None:
    web.page("/a", PAGE)
    web.redirect("/hop", "/a")
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL, per_domain_interval=600))
    try:
        deadline = time.monotonic() + 30
        # A redirect to the same host does not wait for a second slot.
        assert (await fetcher.fetch(web.url("/hop"), deadline=deadline)).status == "ok"
        got = await fetcher.fetch(web.url("/a"), deadline=deadline)
        assert got.status == "timeout"
        assert re.fullmatch(
            r"rate limit: the next request to 127\.0\.0\.1 may start in .* s, after the deadline", got.error
        )
        got = await fetcher.fetch(web.url("/a", host="localhost"), deadline=deadline)
        assert got.status == "ok"  # another host has its own slots
    finally:
        await fetcher.aclose()
    assert len(web.requests) == 3


async def test_timeout_and_deadline(web: WebServer) -> None:
    slow = web.slow("/slow", 30)
    got = await fetch(slow, timeout_seconds=0.3)
    assert (got.status, got.error) == ("timeout", "timed out after 0.3 s")
    got = await fetch(slow, deadline=time.monotonic() + 0.3)
    assert got.status == "timeout" and got.error.startswith("deadline reached after")
    got = await fetch(slow, deadline=time.monotonic() - 1)
    assert got.status == "timeout" and got.error.startswith("deadline passed before")


# ---------------------------------------------------------------- get_json (search providers)


async def test_get_json_reads_a_searxng_answer(web: WebServer) -> None:
    hits = [
        searx_result("https://example.com/a", "A", "about a", score=2.5, published="2024-05-01T00:00:00"),
        searx_result("https://example.org/b", "B"),
    ]
    web.searxng(hits)
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL))
    try:
        code, answer = await fetcher.get_json(
            web.url("/search"), params={"q": "lynx cats", "format": "json"}, headers={"X-Key": "k"}
        )
    finally:
        await fetcher.aclose()
    assert code == 200 and answer["results"] == hits and answer["query"] == "lynx cats"
    (seen,) = web.requests_to("/search")
    assert seen.query == {"q": ["lynx cats"], "format": ["json"]}
    assert seen.headers["x-key"] == "k" and seen.headers["accept"] == "application/json"


async def get_json_error(web: WebServer, path: str, **policy) -> FetchError:
    fetcher = Fetcher(FetchPolicy(**{"allowed_networks": LOCAL, **policy}))
    try:
        with pytest.raises(FetchError) as caught:
            await fetcher.get_json(web.url(path) + "?key=secret", params={"q": "x"}, headers={})
    finally:
        await fetcher.aclose()
    assert "secret" not in str(caught.value)  # a key in the query never reaches a message
    return caught.value


async def test_get_json_errors_carry_the_status_and_the_body_start(web: WebServer) -> None:
    web.status("/down", 503, "E" * 200 + "F" * 300, content_type="text/plain")
    error = await get_json_error(web, "/down")
    assert error.http_status == 503
    assert str(error) == f"HTTP 503 Service Unavailable from {web.url('/down')}: " + "E" * 200
    web.page("/html", "<html>no json</html>")
    assert "the answer is not JSON: <html>no json</html>" in str(await get_json_error(web, "/html"))
    web.searxng([], path="/search")
    error = await get_json_error(web, "/search")  # no format=json: SearXNG says 403
    assert error.http_status == 403 and "403 Forbidden" in str(error)
    web.redirect("/moved", "https://elsewhere.test/search?key=secret")
    assert "redirects are not followed" in str(await get_json_error(web, "/moved"))
    web.page("/huge", '{"a": "' + "x" * 5000 + '"}', content_type="application/json")
    assert "larger than 1000 bytes" in str(await get_json_error(web, "/huge", max_bytes=1000))
    web.slow("/slow", 30, content_type="application/json")
    error = await get_json_error(web, "/slow", timeout_seconds=0.3)
    assert str(error) == f"{web.url('/slow')}: timed out after 0.3 s"
    assert (
        str(await get_json_error(web, "/x", allowed_networks=()))
        == "refused: 127.0.0.1 is a loopback address"
    )


async def test_a_trusted_provider_on_loopback_is_reached_while_pages_there_are_refused(
    web: WebServer,
) -> None:
    """The documented local SearXNG (127.0.0.1) with allowed_networks=[]: the operator's own
    provider URL is asked for as trusted, for that request only; a page on the same origin is
    still refused, before and after, and never rides the provider's kept-alive connection."""
    web.searxng([searx_result("https://example.com/a", "A")])
    page = web.page("/page", PAGE)
    fetcher = Fetcher(FetchPolicy())  # nothing allowed
    params = {"q": "lynx", "format": "json"}
    try:
        before = await fetcher.fetch(page)
        code, answer = await fetcher.get_json(web.url("/search"), params=params, headers={}, trusted=True)
        after = await fetcher.fetch(page)
        with pytest.raises(FetchError, match=r"^refused: 127\.0\.0\.1 is a loopback address$"):
            await fetcher.get_json(web.url("/search"), params=params, headers={})  # not trusted
        code_again, _ = await fetcher.get_json(web.url("/search"), params=params, headers={}, trusted=True)
    finally:
        await fetcher.aclose()
    assert code == code_again == 200 and answer["results"][0]["url"] == "https://example.com/a"
    for got in (before, after):
        assert (got.status, got.error) == ("blocked", "refused: 127.0.0.1 is a loopback address")
    assert [r.path for r in web.requests] == ["/search", "/search"]


async def test_a_trusted_request_keeps_the_url_rules_the_cap_and_no_redirects(web: WebServer) -> None:
    fetcher = Fetcher(FetchPolicy(max_bytes=1000))
    web.page("/huge", '{"a": "' + "x" * 5000 + '"}', content_type="application/json")
    web.redirect("/moved", "http://10.0.0.1/search")
    try:
        for url, message in [
            ("file:///etc/passwd", "refused: scheme 'file' is not allowed"),
            ("http://user:pw@127.0.0.1/", "refused: credentials in the URL are not allowed"),
            (web.url("/huge"), "larger than 1000 bytes"),
            (web.url("/moved"), "redirects are not followed"),
        ]:
            with pytest.raises(FetchError) as caught:
                await fetcher.get_json(url, params={}, headers={}, trusted=True)
            assert message in str(caught.value), url
    finally:
        await fetcher.aclose()
    assert [r.path for r in web.requests] == ["/huge", "/moved"]


def test_a_fetcher_serves_successive_event_loops(web: WebServer) -> None:
    """A process-wide fetcher (state.fetcher_for) outlives an anyio.run: the next run gets a
    client of its own loop, not one whose loop is closed."""
    url = web.page("/a", PAGE)
    web.searxng([searx_result("https://example.com/a", "A")])
    fetcher = Fetcher(FetchPolicy(allowed_networks=LOCAL))

    async def once() -> tuple[str, int]:
        got = await fetcher.fetch(url)
        code, _ = await fetcher.get_json(
            web.url("/search"), params={"format": "json"}, headers={}, trusted=True
        )
        return got.status, code

    try:
        assert anyio.run(once) == ("ok", 200)
        assert anyio.run(once) == ("ok", 200)
        assert anyio.run(once) == ("ok", 200)
        anyio.run(fetcher.aclose)  # from a loop the clients were not made in: dropped, no error
        assert anyio.run(once) == ("ok", 200)
        anyio.run(fetcher.aclose)
    finally:
        gc.collect()  # the dropped clients' sockets, before the server stops
    assert len(web.requests) == 8


# ---------------------------------------------------------------- TLS


async def test_https_names_the_host_for_sni_and_the_certificate() -> None:
    """The connection goes to 127.0.0.1 by number, yet TLS sends the host name and checks the
    certificate against it: the certificate names secure.test and a few others, not other.test."""
    pytest.importorskip("trustme")
    with WebServer(tls=True) as web:
        web.page("/a", PAGE)
        names = Names({"secure.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
        fetcher = Fetcher(
            FetchPolicy(allowed_networks=LOCAL), resolver=names, ssl_context=web.client_ssl_context()
        )
        try:
            got = await fetcher.fetch(web.url("/a", host="secure.test"))
            assert (got.status, got.body) == ("ok", PAGE)
            assert web.sni_names == ["secure.test"]
            got = await fetcher.fetch(web.url("/a", host="other.test"))
            assert got.status == "connection_error" and "certificate" in got.error.lower()
            assert got.error.startswith("could not connect")
            # A certificate from an authority the client does not trust.
            stranger = Fetcher(FetchPolicy(allowed_networks=LOCAL), resolver=names)
            try:
                got = await stranger.fetch(web.url("/a", host="secure.test"))
                assert got.status == "connection_error" and "certificate verify failed" in got.error
            finally:
                await stranger.aclose()
        finally:
            await fetcher.aclose()
        assert len(web.requests_to("/a")) == 1


async def test_http2_when_the_server_offers_it() -> None:
    pytest.importorskip("trustme")
    with WebServer(tls=True, http2=True) as web:
        web.page("/a", PAGE)
        web.redirect("/hop", "/a")
        web.gzip_bomb("/bomb", 10_000_000)
        web.endless("/endless")
        web.endless("/drip", chunk=b"<p>x</p>", interval=0.05)
        names = Names({"secure.test": [["127.0.0.1"]]})
        policy = FetchPolicy(allowed_networks=LOCAL, max_bytes=1_000_000)
        fetcher = Fetcher(policy, resolver=names, ssl_context=web.client_ssl_context())
        try:
            got = await fetcher.fetch(web.url("/hop", host="secure.test"))
            assert (got.status, got.body, got.final_url) == ("ok", PAGE, web.url("/a", host="secure.test"))
            assert (await fetcher.fetch(web.url("/a", host="secure.test"))).status == "ok"
            assert names.calls == ["secure.test"]  # one connection so far, multiplexed
            # A stream left unfinished (cap reached, deadline passed) does not stall the next:
            # its connection is dropped and a new one made (httpcore sends no RST_STREAM).
            assert (await fetcher.fetch(web.url("/bomb", host="secure.test"))).status == "too_large"
            assert (await fetcher.fetch(web.url("/a", host="secure.test"))).status == "ok"
            assert (await fetcher.fetch(web.url("/endless", host="secure.test"))).status == "too_large"
            assert (await fetcher.fetch(web.url("/a", host="secure.test"))).status == "ok"
            got = await fetcher.fetch(web.url("/drip", host="secure.test"), deadline=time.monotonic() + 0.3)
            assert got.status == "timeout" and got.error.startswith("deadline reached")
            assert (await fetcher.fetch(web.url("/a", host="secure.test"))).status == "ok"
        finally:
            await fetcher.aclose()
        assert {r.version for r in web.requests} == {"HTTP/2"} and len(web.requests) == 9
        assert names.calls == ["secure.test"] * 4  # a connection per unfinished stream, plus the first


async def test_a_folder_is_served_with_types_from_suffixes(web: WebServer, tmp_path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "index.html").write_bytes(PAGE)
    (tmp_path / "notes.md").write_text("# Notes\n")
    (tmp_path / "secret.txt").write_text("outside the folder")
    web.folder("/site/", tmp_path / "pages")
    web.folder("/md/", tmp_path)
    got = await fetch(web.url("/site/index.html"))
    assert (got.status, got.content_type, got.body) == ("ok", "text/html", PAGE)
    got = await fetch(web.url("/md/notes.md"))
    assert (got.status, got.content_type, got.charset) == ("ok", "text/markdown", "utf-8")
    assert (await fetch(web.url("/site/../secret.txt"))).status == "not_found"
    assert (await fetch(web.url("/site/%2e%2e/secret.txt"))).status == "not_found"


async def test_a_custom_route_is_one_function(web: WebServer) -> None:
    url = web.route(
        "/teapot", lambda request: Response(200, [("Content-Type", "text/plain")], request.host.encode())
    )
    got = await fetch(url)
    assert got.body == f"127.0.0.1:{web.port}".encode()
