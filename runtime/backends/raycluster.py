"""Joining a Ray cluster, shared by the engines that spread work over one (`lynxc index --engine
ray`, lynx/distributed.py; `lynxc load --engine ray`, records/distributed.py): one-line errors for
a missing Ray, an unreachable address, a failing cluster."""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

CONNECT_SECONDS = 10  # reaching the cluster's address


class RayUnavailable(Exception):
    """Ray is not installed, or its cluster cannot be reached or fails: said in one line."""


def connect(address: str | None, entrypoint: str) -> Any:
    """Ray, joined to the cluster at `address` (default: RAY_ADDRESS, else a local Ray); the
    driver's job is named `entrypoint` (never its command line: settings there may carry
    credentials, and the cluster shows a job's entrypoint). RayUnavailable when it cannot."""
    try:
        import lance  # noqa: F401  (the engines write Lance fragments or tables with it)
        import ray
    except ImportError as err:
        raise RayUnavailable(
            f"--engine ray needs Ray and Lance ({err.name} is not installed): pip install 'lynxc[ray]'"
        ) from None
    target = address or os.environ.get("RAY_ADDRESS") or None
    if target and target not in ("auto", "local"):
        _check_reachable(target)
    # Ray records the driver's command line as its job's entrypoint (`ray list jobs`, the dashboard);
    # an `--set index_storage=...` there would show its credentials to anyone who can see the
    # cluster. The job is named by the command without its arguments instead.
    import ray._private.utils as ray_utils

    ray_utils.get_entrypoint_name = lambda: entrypoint
    try:
        ray.init(
            address=target,
            logging_level=logging.ERROR,
            log_to_driver=False,
            include_dashboard=False if target in (None, "local") else None,
        )
    except Exception as err:
        raise RayUnavailable(
            f"cannot join the Ray cluster at {target or 'a local Ray'}: {one_line(err)}"
        ) from None
    return ray


def _check_reachable(address: str) -> None:
    """A quick TCP connect to the cluster's address: Ray itself retries an unreachable one for a minute."""
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(
            f"--address {address!r} is not a Ray address (host:port, as `ray start` prints it)"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as err:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {err.strerror or err}") from None


def one_line(err: BaseException) -> str:
    """An exception as one short line: Ray's carry the remote traceback, its last line says what."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[-1] if lines else ''}"[:300]
