"""candidates.py: signed tokens (round trip, tampering, expiry, a restarted signer, garbage that never
raises), links found in Markdown, and the canonical form used to drop link variants."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import re
import string
import time
from typing import Any

import pytest

from lynxc.runtime.backends.groundhog.candidates import (
    MAX_TOKEN_LENGTH,
    MAX_URL_LENGTH,
    CandidateSigner,
    canonical_link,
    links_in_markdown,
)

KEY = b"k" * 32
PAYLOAD = {
    "url": "https://example.org/a?b=1",
    "label": "Ünïcode “label” \u202e",
    "parent_source_url": "https://source.example/page",
    "parent_passage_id": "s1-3",
    "depth": 1,
}


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forge(key: bytes, body: Any) -> str:
    """A token for any JSON body under `key`, the way the signer builds one."""
    head = b64(json.dumps(body).encode())
    return head + "." + b64(hmac.new(key, head.encode(), hashlib.sha256).digest())


# --- tokens ------------------------------------------------------------------------------------------


def test_round_trip_returns_the_payload_as_signed() -> None:
    signer = CandidateSigner(KEY)
    token = signer.sign(PAYLOAD)
    assert re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", token), "compact and URL-safe"
    assert signer.verify(token) == ("ok", PAYLOAD)


def test_the_token_carries_its_expiry() -> None:
    clock = Clock()
    token = CandidateSigner(KEY, clock=clock).sign({"url": "https://a.example/"})
    body = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert body == {"url": "https://a.example/", "exp": int(clock.now + 1800)}


def test_a_payload_may_not_set_its_own_expiry() -> None:
    with pytest.raises(ValueError, match="exp"):
        CandidateSigner(KEY).sign({"url": "u", "exp": 10**12})


def test_tampered_payload_is_invalid() -> None:
    signer = CandidateSigner(KEY)
    head, mac = signer.sign(PAYLOAD).split(".")
    other = b64(json.dumps({**PAYLOAD, "url": "https://evil.example/", "exp": 10**12}).encode())
    assert signer.verify(f"{other}.{mac}") == ("invalid_token", None)
    flipped = head[:-3] + ("A" if head[-3] != "A" else "B") + head[-2:]
    assert signer.verify(f"{flipped}.{mac}") == ("invalid_token", None)
    assert signer.verify(f"{head}=.{mac}") == ("invalid_token", None)


def test_tampered_signature_is_invalid() -> None:
    signer = CandidateSigner(KEY)
    head, mac = signer.sign(PAYLOAD).split(".")
    for bad in (mac[:-1], mac + "A", mac[::-1], "A" * len(mac), mac.upper(), ""):
        assert signer.verify(f"{head}.{bad}") == ("invalid_token", None)
    _, other_mac = signer.sign({"url": "https://b.example/"}).split(".")
    assert signer.verify(f"{head}.{other_mac}") == ("invalid_token", None)


def test_expiry_with_an_injected_clock() -> None:
    clock = Clock()
    signer = CandidateSigner(KEY, clock=clock)
    token = signer.sign(PAYLOAD)
    clock.now += 1799
    assert signer.verify(token) == ("ok", PAYLOAD)
    clock.now += 2
    assert signer.verify(token) == ("expired", None)


def test_short_ttl() -> None:
    clock = Clock()
    signer = CandidateSigner(KEY, ttl_seconds=60, clock=clock)
    token = signer.sign(PAYLOAD)
    clock.now += 61
    assert signer.verify(token)[0] == "expired"


def test_an_expired_forgery_is_invalid_not_expired() -> None:
    signer = CandidateSigner(KEY)
    forged = forge(b"x" * 32, {**PAYLOAD, "exp": 1})
    assert signer.verify(forged) == ("invalid_token", None)


def test_a_restarted_signer_refuses_old_tokens() -> None:
    token = CandidateSigner().sign(PAYLOAD)
    assert CandidateSigner().verify(token) == ("invalid_token", None)
    assert CandidateSigner(b"other key, 32 bytes long........").verify(
        CandidateSigner(KEY).sign(PAYLOAD)
    ) == (
        "invalid_token",
        None,
    )


def test_signed_but_malformed_bodies_are_invalid() -> None:
    signer = CandidateSigner(KEY)
    far = time.time() + 3600
    for body in (
        [1, 2],
        "text",
        None,
        {"url": "u"},  # no exp
        {"exp": "tomorrow"},
        {"exp": True},
        {"exp": None},
    ):
        assert signer.verify(forge(KEY, body)) == ("invalid_token", None), body
    nan_head = b64(b'{"exp": NaN}')
    nan = nan_head + "." + b64(hmac.new(KEY, nan_head.encode(), hashlib.sha256).digest())
    assert signer.verify(nan) == ("invalid_token", None)
    assert signer.verify(forge(KEY, {"exp": far, "url": "u"})) == ("ok", {"url": "u"})
    deep = b64(b"[" * 3000)
    assert signer.verify(deep + "." + b64(hmac.new(KEY, deep.encode(), hashlib.sha256).digest()))[0] == (
        "invalid_token"
    )


def test_over_long_tokens_are_refused() -> None:
    signer = CandidateSigner(KEY)
    assert signer.verify("A" * (MAX_TOKEN_LENGTH + 1)) == ("invalid_token", None)
    head = b64(json.dumps({"exp": time.time() + 60, "pad": "x" * 4000}).encode())
    long_token = head + "." + b64(hmac.new(KEY, head.encode(), hashlib.sha256).digest())
    assert len(long_token) > MAX_TOKEN_LENGTH
    assert signer.verify(long_token) == ("invalid_token", None)
    with pytest.raises(ValueError, match="over 4096"):
        signer.sign({"label": "x" * 4000})


def test_garbage_never_raises() -> None:
    signer = CandidateSigner(KEY)
    token = signer.sign(PAYLOAD)
    rng = random.Random(15)
    alphabets = [
        string.ascii_letters + string.digits + "-_",
        string.ascii_letters + string.digits + "-_.",
        string.printable,
        "".join(chr(c) for c in range(0x20, 0x250)) + "\u202e\u200b\U000e0041\ud800",
        ".=+/",
    ]
    samples: list[Any] = [None, 0, 1.5, b"bytes.bytes", ["a.b"], {"token": token}, "", ".", "..", "a.", ".a"]
    samples += [token + ".", token[:-1], "." + token, token.replace(".", ".."), token + "\x00", " " + token]
    for _ in range(400):
        alphabet = rng.choice(alphabets)
        samples.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))))
    for _ in range(100):  # mutations of a real token: one character replaced, inserted or removed
        position = rng.randrange(len(token))
        char = rng.choice(string.ascii_letters + string.digits + "-_.=")
        samples.append(
            rng.choice(
                [
                    token[:position] + char + token[position + 1 :],
                    token[:position] + char + token[position:],
                    token[:position] + token[position + 1 :],
                ]
            )
        )
    for sample in samples:
        verdict, payload = signer.verify(sample)
        if sample == token:
            continue
        assert (verdict, payload) == ("invalid_token", None), repr(sample)


@pytest.mark.parametrize("key", [b"", b"short", "a text key, not bytes, 32 chars.."])
def test_bad_keys_are_refused(key: Any) -> None:
    with pytest.raises(ValueError, match="key"):
        CandidateSigner(key)


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf")])
def test_bad_ttl_is_refused(ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl_seconds"):
        CandidateSigner(KEY, ttl_seconds=ttl)


def test_default_keys_differ() -> None:
    assert CandidateSigner().sign({"a": 1}) != CandidateSigner().sign({"a": 1})


# --- links in Markdown -------------------------------------------------------------------------------

BASE = "https://site.example/dir/page.html"


def urls(markdown: str, base: str = BASE) -> list[str]:
    return [url for url, _, _, _ in links_in_markdown(markdown, base)]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("[a](https://a.example/x)", [("https://a.example/x", "a")]),
        ("[rel](other.html)", [("https://site.example/dir/other.html", "rel")]),
        ("[root](/top?q=1)", [("https://site.example/top?q=1", "root")]),
        ("[up](../up/)", [("https://site.example/up/", "up")]),
        ("[proto](//cdn.example/lib)", [("https://cdn.example/lib", "proto")]),
        ("[frag](https://a.example/x#part)", [("https://a.example/x", "frag")]),
        ("[in page](#section) [self](page.html#s) [same](https://site.example/dir/page.html)", []),
        ("[the [nested] label](https://a.example/n)", [("https://a.example/n", "the [nested] label")]),
        ("[[double]](https://a.example/d)", [("https://a.example/d", "[double]")]),
        ('[t](https://a.example/t "A title")', [("https://a.example/t", "t")]),
        ("[t](https://a.example/t 'single')", [("https://a.example/t", "t")]),
        ("[t](<https://a.example/with space>)", [("https://a.example/with%20space", "t")]),
        (
            "[wiki](https://en.wikipedia.org/wiki/Lynx_(genus))",
            [("https://en.wikipedia.org/wiki/Lynx_(genus)", "wiki")],
        ),
        ("[amp](https://a.example/?a=1&amp;b=2)", [("https://a.example/?a=1&b=2", "amp")]),
        ("[**bold** `code`](https://a.example/b)", [("https://a.example/b", "bold code")]),
        ("[](https://a.example/empty)", [("https://a.example/empty", "https://a.example/empty")]),
        ("[upper](HTTPS://A.example/U)", [("https://A.example/U", "upper")]),
        # images are not pages: left out, with their sources
        ("![alt](https://img.example/i.png)", []),
        ('![alt](/i.png "t") text', []),
        # a linked image is a link to its target, labelled with the alt text
        ("[![Logo](/logo.png)](https://a.example/home)", [("https://a.example/home", "Logo")]),
        # schemes other than http(s) are dropped
        ("[m](mailto:a@b.example) [j](javascript:alert(1)) [d](data:text/html,hi) [f](ftp://f.example/)", []),
        ("[j](JavaScript:void(0)) [t](tel:+123)", []),
        # code is not an invitation
        ("`[c](https://code.example/)` and `https://code.example/bare`", []),
        (
            "```\n[c](https://fence.example/)\nhttps://fence.example/bare\n```\n[after](https://a.example/after)",
            [("https://a.example/after", "after")],
        ),
        ("~~~md\nhttps://tilde.example/\n~~~", []),
        # escaped brackets are text; the URL in the parentheses is still a bare URL
        ("\\[no\\](https://a.example/p)", [("https://a.example/p", "https://a.example/p")]),
        # a link's text does not cross a blank line
        ("[broken\n\nlabel](https://a.example/b)", [("https://a.example/b", "https://a.example/b")]),
        ("[one\nline](https://a.example/l)", [("https://a.example/l", "one line")]),
        # bare URLs and autolinks, trailing punctuation trimmed
        ("See https://a.example/x.", [("https://a.example/x", "https://a.example/x")]),
        ("(see https://a.example/y), then", [("https://a.example/y", "https://a.example/y")]),
        ("<https://a.example/auto>", [("https://a.example/auto", "https://a.example/auto")]),
        (
            "https://en.wikipedia.org/wiki/Lynx_(genus)!",
            [("https://en.wikipedia.org/wiki/Lynx_(genus)", "https://en.wikipedia.org/wiki/Lynx_(genus)")],
        ),
        ("**https://a.example/strong**", [("https://a.example/strong", "https://a.example/strong")]),
        ("https://a.example/f#frag", [("https://a.example/f", "https://a.example/f#frag")]),
        ("nohttps://a.example/ x@https://b.example/ https:// http://", []),
        ("[ref]: https://a.example/def", [("https://a.example/def", "https://a.example/def")]),
        ("[bad ipv6](http://[::1/x)", []),
        ("[no paren] (https://a.example/sp)", [("https://a.example/sp", "https://a.example/sp")]),
    ],
)
def test_links_in_markdown(markdown: str, expected: list[tuple[str, str]]) -> None:
    assert [(url, label) for url, label, _, _ in links_in_markdown(markdown, BASE)] == expected


def test_offsets_cover_the_link_or_the_bare_url() -> None:
    markdown = "Intro [label](/a) then https://b.example/c. And ![i](/i.png) [x ![y](/y.png)](/z)."
    found = links_in_markdown(markdown, BASE)
    assert [markdown[start:end] for _, _, start, end in found] == [
        "[label](/a)",
        "https://b.example/c",
        "[x ![y](/y.png)](/z)",
    ]
    assert [label for _, label, _, _ in found] == ["label", "https://b.example/c", "x y"]


def test_every_occurrence_is_returned_in_order() -> None:
    markdown = "[a](https://a.example/) https://a.example/ [b](https://a.example/#x)"
    assert urls(markdown) == ["https://a.example/"] * 3


def test_relative_links_need_an_http_base() -> None:
    assert urls("[r](/x) [a](https://a.example/)", base="") == ["https://a.example/"]
    assert urls("[r](/x)", base="file:///etc/passwd") == []


def test_over_long_urls_are_dropped() -> None:
    long = "https://a.example/" + "x" * MAX_URL_LENGTH
    assert urls(f"[l]({long}) {long}") == []


def test_pathological_markdown_is_fast() -> None:
    cases = [
        "[" * 50_000,
        "[a](" * 20_000,
        "![](" * 20_000,
        "`" * 50_000 + "x" + "`" * 49_999,
        "` `` ``` " * 5_000,
        "[x](https://a.example/" + "(" * 30_000,
        ("[a] " * 10_000) + "](https://a.example/)",
        "https://a.example/" + ")" * 50_000,
        "[a](<" * 20_000,
        '[a](b "' * 20_000,
        "[a](b (" * 20_000,
        "\\" * 50_000 + "[" * 50_000,
    ]
    # CPU time of this process, not wall time: a hang guard that a loaded machine cannot trip.
    started = time.process_time()
    for markdown in cases:
        links_in_markdown(markdown, BASE)
    assert time.process_time() - started < 5


def test_garbage_markdown_never_raises() -> None:
    rng = random.Random(7)
    alphabet = "[]()<>!`\\#*_ \n\t\"'ahttps:/.?=&%~;\u202e"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        for url, _, start, end in links_in_markdown(text, BASE):
            assert url.startswith(("http://", "https://")) and 0 <= start < end <= len(text)
    assert links_in_markdown("", BASE) == []
    assert links_in_markdown(None, BASE) == []  # type: ignore[arg-type]


# --- canonical form ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://example.com/a", "https://example.com/a"),
        ("HTTPS://EXAMPLE.COM/Path", "https://example.com/Path"),  # the path keeps its case
        ("https://example.com", "https://example.com/"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com/a//", "https://example.com/a"),
        ("https://example.com/a#frag", "https://example.com/a"),
        ("https://example.com/#", "https://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com:443/a", "http://example.com:443/a"),
        ("https://example.com:0443/a", "https://example.com/a"),
        ("https://example.com./a", "https://example.com/a"),
        ("https://www.example.com/a", "https://www.example.com/a"),  # www. may be another host
        ("https://example.com/a?utm_source=x&utm_medium=y", "https://example.com/a"),
        ("https://example.com/a?b=2&UTM_Campaign=z&a=1", "https://example.com/a?b=2&a=1"),
        ("https://example.com/a?fbclid=1&gclid=2&msclkid=3&id=9", "https://example.com/a?id=9"),
        ("https://example.com/a?utm%5Fsource=x&k=v", "https://example.com/a?k=v"),
        ("https://example.com/a?&&k=v&", "https://example.com/a?k=v"),
        ("https://example.com/a?q=a+b&r=%2f", "https://example.com/a?q=a+b&r=%2F"),
        ("https://example.com/%7euser/%41", "https://example.com/~user/A"),
        ("https://Bücher.example/", "https://xn--bcher-kva.example/"),
        ("https://user:pw@Example.COM:443/", "https://user:pw@example.com/"),
        ("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x"),
        ("http://[2001:db8::1]:8080/x", "http://[2001:db8::1]:8080/x"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("mailto:someone@example.com", "mailto:someone@example.com"),
        ("http://[::1", "http://[::1"),  # malformed: returned as is, no exception
        ("", ""),
    ],
)
def test_canonical_link(url: str, canonical: str) -> None:
    assert canonical_link(url) == canonical


def test_canonical_link_joins_the_variants_a_page_offers() -> None:
    variants = [
        "https://Example.com/guide/",
        "https://example.com:443/guide#intro",
        "https://example.com/guide?utm_source=newsletter",
        "https://example.com/guide?fbclid=abc#top",
    ]
    assert {canonical_link(v) for v in variants} == {"https://example.com/guide"}
    assert canonical_link("https://example.com/guide?page=2") != canonical_link("https://example.com/guide")


def test_canonical_link_never_raises() -> None:
    rng = random.Random(3)
    alphabet = string.printable + "[]@:%ü\u202e"
    for _ in range(300):
        canonical_link("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))))
    canonical_link(None)  # type: ignore[arg-type]
