"""Which URLs and addresses groundhog may reach: pure rules, no I/O.

A URL must be absolute http(s), with a host and no credentials (`refuse_url`). An address is
refused unless inside `allowed_networks` when it is private, loopback, link-local, multicast,
reserved, unspecified, broadcast, shared (CGNAT 100.64/10), in a documentation or benchmark
range, a cloud metadata address (169.254.169.254, fd00:ec2::254), IPv6 unique-local or
site-local, or an IPv4 address in IPv6 clothing (IPv4-mapped ::ffff:a.b.c.d judged as the IPv4
address it reaches, 6to4 2002::/16 and NAT64 64:ff9b::/96 judged by the IPv4 address they
embed, the deprecated IPv4-compatible ::a.b.c.d refused).

`allowed_networks` is the operator's: an entry with host bits set ("127.0.0.1/1") or wider than
a /8 (IPv4) or /16 (IPv6) is an error, not silently widened, and no range opens a cloud metadata
address: only the exact address, listed on its own (/32 or /128), does.

A refusal names the address only when the URL itself gave it: "10.0.0.1 is a private address",
but "intranet.example resolves to a private address", so an error shown to an agent (or whoever
prompts it) does not map the internal network's DNS.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

MAX_URL_LENGTH = 8192
# The widest range allowed_networks may open, by IP version: a wider one is almost surely a typo
# ("127.0.0.1/1") and opens the whole internal network.
MIN_PREFIX = {4: 8, 6: 16}
METADATA = "a cloud metadata address"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


# ---------------------------------------------------------------- URLs


def refuse_url(url: str) -> str | None:
    """What is wrong with the URL itself, or None: only absolute http(s) URLs with a host and no
    credentials. Parsed by httpx, so the check and the request read the URL the same way."""
    import httpx

    if not isinstance(url, str) or not url.strip():
        return "empty URL"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "control characters in the URL"
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        return f"not a valid URL ({exc})"
    try:
        host = parsed.host  # decodes an IDNA name: "xn--" with no Punycode after it fails here
    except ValueError as exc:  # idna.IDNAError is a ValueError
        return f"not a valid URL: the host name is not valid IDNA ({exc})"
    if not parsed.scheme:
        return "no scheme: give an absolute http or https URL"
    if parsed.scheme not in ("http", "https"):
        return f"scheme {parsed.scheme!r} is not allowed (only http and https)"
    if not host.rstrip("."):
        return "no host"
    if parsed.userinfo:
        return "credentials in the URL are not allowed"
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        return f"port {parsed.port} is out of range (1-65535)"
    return None


# ---------------------------------------------------------------- allowed networks


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """The allowed networks; ValueError naming the field, the entry and the rule it breaks."""
    networks = []
    for cidr in cidrs:
        text = str(cidr).strip()
        try:
            network = ipaddress.ip_network(text, strict=False)
            given = ipaddress.ip_interface(text).ip
        except ValueError:
            raise ValueError(
                f"allowed_networks: {cidr!r} is not an IP network (e.g. '127.0.0.1/32' or '::1/128')"
            ) from None
        if int(given) != int(network.network_address):
            single = f"{given}/{network.max_prefixlen}"
            raise ValueError(
                f"allowed_networks: {cidr!r} has host bits set (as a network it would be {network}, "
                f"far more than meant): write the network's first address, or {single!r} for one address"
            )
        widest = MIN_PREFIX[network.version]
        if network.prefixlen < widest:
            raise ValueError(
                f"allowed_networks: {cidr!r} is too wide: a range may be at most a /{widest} "
                f"for IPv{network.version} (list the networks meant, one by one)"
            )
        networks.append(network)
    return tuple(networks)


# ---------------------------------------------------------------- addresses


def _nets(*pairs: tuple[str, str]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(cidr), kind) for cidr, kind in pairs)


# First match wins: the specific names come before the ranges that contain them.
_IPV4_REFUSED = _nets(
    ("169.254.169.254/32", METADATA),
    ("0.0.0.0/8", "an unspecified address"),
    ("127.0.0.0/8", "a loopback address"),
    ("10.0.0.0/8", "a private address"),
    ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"),
    ("100.64.0.0/10", "a shared (CGNAT) address"),
    ("169.254.0.0/16", "a link-local address"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "a broadcast address"),
    ("240.0.0.0/4", "a reserved address"),
    ("192.0.0.0/24", "a reserved address"),  # IETF protocol assignments
    ("192.0.2.0/24", "a reserved address"),  # documentation
    ("198.51.100.0/24", "a reserved address"),
    ("203.0.113.0/24", "a reserved address"),
    ("198.18.0.0/15", "a reserved address"),  # benchmarking
    ("192.88.99.0/24", "a reserved address"),  # former 6to4 relay anycast
)
_IPV6_REFUSED = _nets(
    ("fd00:ec2::254/128", METADATA),
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("64:ff9b:1::/48", "a private address"),  # local-use NAT64
    ("fc00::/7", "a private address"),  # unique local
    ("fec0::/10", "a private address"),  # site-local (deprecated)
    ("fe80::/10", "a link-local address"),
    ("ff00::/8", "a multicast address"),
    ("100::/64", "a reserved address"),  # discard
    ("2001::/23", "a reserved address"),  # IETF protocol assignments, Teredo included
    ("2001:db8::/32", "a reserved address"),  # documentation
    ("3fff::/20", "a reserved address"),  # documentation
    ("5f00::/16", "a reserved address"),  # SRv6 SIDs
)
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _kind(ip: Address) -> tuple[str, str] | None:
    """(why the address is refused, the IPv4 address it stands for as " (... a.b.c.d)" or ""),
    or None when public. Kept apart so a refusal for a name can leave the address out."""
    if isinstance(ip, ipaddress.IPv4Address):
        for network, kind in _IPV4_REFUSED:
            if ip in network:
                return kind, ""
        return None if ip.is_global else ("a reserved address", "")
    ip = ipaddress.IPv6Address(int(ip))  # drop a zone (fe80::1%eth0): ranges ignore it
    if ip.ipv4_mapped is not None:
        found = _kind(ip.ipv4_mapped)
        return None if found is None else (found[0], f" (IPv4-mapped {ip.ipv4_mapped})")
    for network, kind in _IPV6_REFUSED:
        if ip in network:
            return kind, ""
    if ip in _IPV4_COMPATIBLE:
        return "an IPv4-compatible address (deprecated)", ""
    embedded, form = None, ""
    if ip in _NAT64:
        embedded, form = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
    elif ip.sixtofour is not None:
        embedded, form = ip.sixtofour, "6to4"
    if embedded is not None:
        found = _kind(embedded)
        if found is not None:
            return found[0], f" ({form} of {embedded})"
    return None if ip.is_global else ("a reserved address", "")


def address_kind(ip: Address) -> str | None:
    """Why this address may not be reached ("a private address", ...), or None when public."""
    found = _kind(ip)
    return None if found is None else found[0] + found[1]


def _is_allowed(ip: Address, allowed: Sequence[Network]) -> bool:
    candidates: list[Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        candidates[0] = ip = ipaddress.IPv6Address(int(ip))
        if ip.ipv4_mapped is not None:  # the socket reaches the IPv4 address itself
            candidates.append(ip.ipv4_mapped)
    found = _kind(ip)
    # A cloud metadata address hands out credentials: no range opens it, only the address itself.
    exact = found is not None and found[0] == METADATA
    return any(
        c in net
        for c in candidates
        for net in allowed
        if c.version == net.version and (not exact or net.num_addresses == 1)
    )


def address_problem(address: str, allowed: Sequence[Network] = ()) -> str | None:
    """Why the policy refuses this address ("a loopback address"), or None when it may be
    reached: public, or inside one of the allowed networks."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "not an IP address"
    if _is_allowed(ip, allowed):
        return None
    return address_kind(ip)


def address_refusal(host: str, address: str, allowed: Sequence[Network] = ()) -> str | None:
    """The refusal of connecting to `address` for the URL's `host`, or None when allowed:
    "10.0.0.1 is a private address" when the URL gave the address, "intranet.example resolves to
    a private address" when it gave a name (the address itself is the internal network's)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"{address!r} is not an IP address"
    if _is_allowed(ip, allowed):
        return None
    found = _kind(ip)
    if found is None:
        return None
    kind, stands_for = found
    if _is_literal(host):
        return f"{address} is {kind}{stands_for}"
    return f"{host} resolves to {kind}"


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
