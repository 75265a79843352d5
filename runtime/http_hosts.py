"""Which Host headers the Streamable HTTP transport serves, and what binding off loopback means.

DNS-rebinding protection compares a request's Host (and Origin) header with the names the
server answers to: a page on an attacker's domain that re-points that domain at this machine
still sends the attacker's name, and is refused (421). It stays on for every bind address:

- loopback (127.0.0.1, localhost, ::1): 127.0.0.1, localhost and [::1], on any port;
- a wildcard (0.0.0.0, ::): the same loopback names (which is what a client on this machine, or
  behind a container's port mapping, sends), and nothing else unless named: the server cannot
  know which of the machine's names and addresses remote clients will use;
- any other address or name: that address or name.

`--allowed-host NAME[:PORT]` adds names (a reverse proxy's, the machine's LAN address).
"""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def host_name(text: str, flag: str = "--allowed-host") -> str:
    """`--allowed-host` text -> the name as a Host header carries it (IPv6 in brackets), with an
    optional `:PORT`. Raises ValueError for text that cannot be a Host header."""
    name, port = text.strip(), ""
    if name.startswith("["):
        inside, bracket, rest = name[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{flag} {text!r}: expected [IPV6] or [IPV6]:PORT")
        name, port = f"[{inside}]", rest[1:]
    elif _is_ipv6(name):
        name = f"[{name}]"
    elif ":" in name:
        name, _, port = name.partition(":")
    if not name or any(c in name for c in "/@ ,") or (port and not port.isdigit()):
        raise ValueError(f"{flag} {text!r}: expected a host name or address, optionally with :PORT")
    return f"{name.lower()}:{port}" if port else name.lower()


def served_names(bind: str, extra: list[str]) -> list[str]:
    """The Host names this server answers to, bound at `bind` (see the module docstring)."""
    if is_loopback(bind) or is_wildcard(bind):
        names = list(LOOPBACK_NAMES)
        if not is_wildcard(bind):
            names.append(host_name(bind))
    else:
        names = [host_name(bind)]
    return list(dict.fromkeys([*names, *(host_name(e) for e in extra)]))


def allowed_hosts(names: list[str]) -> list[str]:
    """Host header patterns in the SDK's form: `NAME:*` for any port, and the bare name too (a
    proxy on port 80 or 443 sends no port)."""
    return [p for name in names for p in ([name] if _has_port(name) else [name, f"{name}:*"])]


def allowed_origins(names: list[str]) -> list[str]:
    return [f"{scheme}://{pattern}" for pattern in allowed_hosts(names) for scheme in ("http", "https")]


def exposure_warning(bind: str, names: list[str], authenticated: bool = False) -> str | None:
    """What an operator must know when the server is reachable from other machines, or None."""
    if is_loopback(bind):
        return None
    where = (
        f"--host {bind} listens on every network interface"
        if is_wildcard(bind)
        else f"--host {bind} is not a loopback address"
    )
    if authenticated:
        return (
            f"warning: {where}, in plain HTTP: callers' access tokens and API keys cross the network "
            "unencrypted unless TLS ends in front of this port (a reverse proxy); the server's resource "
            "URI should then be the https address clients use."
        )
    return (
        f"warning: {where}: other machines that can reach it can call this server's tools, with no "
        f"authentication. DNS-rebinding protection stays on: only requests whose Host header names "
        f"{', '.join(names)} are served (any other gets 421 Misdirected Request); name what remote "
        f"clients connect to with --allowed-host NAME (e.g. this machine's address or DNS name)."
    )


def _is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False


def _has_port(name: str) -> bool:
    return name.rpartition("]")[2].count(":") == 1 if name.startswith("[") else ":" in name
