"""Open a TCP connection only to an address the policy allows: the guarded httpcore backend.

Every TCP connection, the first and each redirect hop's, is opened here: the name is resolved
once, each address checked (addresses.py), and the connection made to a checked address, by
number, so the system never looks the name up a second time and a DNS answer that changes
between check and connect cannot move the request. TLS still names the host: httpcore hands the
origin's host name, not the address, to start_tls for SNI and certificate checks. A name that
resolves to some allowed and some refused addresses is reached through the allowed ones only.

A backend made with `check=False` (for the operator's own search provider, never for a page)
resolves and connects the same way without refusing any address.

httpcore and anyio are imported inside functions only: `lynxc build` imports the tools module.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import cache
from typing import Any

from .addresses import Network, address_refusal

# (host, port) -> the host's addresses, as text; the system resolver unless a test injects one.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]


class AddressRefused(Exception):
    """A connection the policy forbids; raised by the guarded backend, never retried."""


class NameNotResolved(OSError):
    """The host name has no address (the resolver does not know it): a page status of its own,
    dns_error, apart from a connection that failed. An OSError, as the resolver's own error is."""


async def system_resolve(host: str, port: int) -> list[str]:
    """The host's addresses by the system resolver, in its order, each once."""
    import anyio

    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _GuardedConnect:
    """The body of the guarded httpcore network backend (the class itself is made at first use,
    with httpcore.AsyncNetworkBackend as its base, so that importing this module stays light).

    connect_tcp resolves once, checks every address and connects to a checked one by number."""

    def __init__(
        self, inner: Any, allowed: Sequence[Network], resolve: Resolver, *, check: bool = True
    ) -> None:
        self._inner = inner
        self._allowed = allowed
        self._resolve = resolve
        self._check = check

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        import httpcore

        addresses = await self._addresses(host, port, timeout)
        refusals: list[str] = []
        failure: Exception | None = None
        for address in addresses:
            refusal = address_refusal(host, address, self._allowed) if self._check else None
            if refusal is not None:
                refusals.append(refusal)
                continue
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # try the host's next allowed address
        if failure is not None:
            raise failure
        raise AddressRefused(refusals[0])

    async def _addresses(self, host: str, port: int, timeout: float | None) -> list[str]:
        import anyio
        import httpcore

        # "example.com." is "example.com" written fully qualified (the root's empty label after
        # the dot), which browsers reach; the system resolver does not find "localhost." in the
        # hosts file, so the name is resolved without the dot (and checked like any other).
        name = host[:-1] if host.endswith(".") else host
        try:
            ipaddress.ip_address(name)
            return [name]  # a literal: nothing to resolve
        except ValueError:
            pass
        try:
            with anyio.fail_after(timeout):
                addresses = list(await self._resolve(name, port))
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from None
        except OSError as exc:
            raise NameNotResolved(f"cannot resolve {host}: {exc.strerror or exc}") from None
        if not addresses:
            raise NameNotResolved(f"cannot resolve {host}: no address")
        return addresses

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> Any:
        raise AddressRefused("unix sockets are not used")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@cache
def _guarded_backend_type() -> type:
    import httpcore

    return type("GuardedBackend", (_GuardedConnect, httpcore.AsyncNetworkBackend), {})


def guarded_backend(allowed: Sequence[Network], resolve: Resolver, *, check: bool = True) -> Any:
    """An httpcore.AsyncNetworkBackend that connects only to allowed addresses (any, unchecked)."""
    import httpcore

    return _guarded_backend_type()(httpcore.AnyIOBackend(), allowed, resolve, check=check)
