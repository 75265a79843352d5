"""One login before serving, so a DSN the database refuses is one clear line at start-up.

`lynxc serve` (and a generated server.py) calls `check_login` through the sql package's
`check_serving`, after the settings are valid and before it reads its first request. It opens
one connection with the DSN setting's value and closes it at once:

- refused (a wrong password, a role or a database that does not exist, pg_hba.conf: see
  failures.login_refusal): a start-up problem, so the server prints one line naming the setting
  (the DSN's password redacted) and exits with the status of every other settings problem.
  Why exit rather than serve and answer the refusal at every call: the DSN is read once, at
  start-up, so a mistyped password or database name cannot heal in that process; an MCP client
  shows a server that fails to start with its stderr, where a serving one hides the cause in its
  tools' answers; and a supervisor (systemd, Kubernetes) restarts it, which also covers a
  password being rotated on the database's side. A refusal that happens after start-up (the
  password changed under a running server) is still a tool error that heals, as before (pool.py).
- unreachable (down, no route, starting up, too many connections): not a start-up failure.
  One informational line, and the server serves; its tools answer "database unreachable: ..."
  and recover once the database is back (pool.py).
- no answer within LOGIN_CHECK_SECONDS (a host that drops packets): the same as unreachable.
  The attempt runs in a daemon thread and is abandoned, so `initialize` waits at most that long;
  a database that answers at all (accepts or refuses) does so in one round trip.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .catalog import PgCatalog
from .failures import first_line, login_refusal

_QUOTED = re.compile(r'"([^"\n]{2,})"')

LOGIN_CHECK_SECONDS = 2.0  # also libpq's smallest connect_timeout
APPLICATION_NAME_LIMIT = 63


def check_login(
    catalog: PgCatalog, settings: Mapping[str, Any], server_name: str, note: Callable[[str], None]
) -> list[str]:
    """The start-up problem of a login the database refuses (none otherwise); `note` gets the
    one informational line of a database that cannot be reached now."""
    from lynxc.runtime.redact import redact

    setting = catalog.dsn_setting
    url = settings.get(setting)
    if not isinstance(url, str) or not url.strip():
        return []  # the first call says the setting is missing (pool.dsn)
    application_name = f"lynxc {server_name}"[:APPLICATION_NAME_LIMIT]
    finished, error = _attempt(url, application_name, LOGIN_CHECK_SECONDS)
    if not finished:
        note(
            f"the database of setting {setting!r} did not answer a login within {LOGIN_CHECK_SECONDS:g} s; "
            "serving anyway: its tools answer until it does"
        )
        return []
    if error is None:
        return []
    reason = login_refusal(error)
    if reason is not None:
        return [f"database refused the login of setting {setting!r} ({redact(url)}): {reason}"]
    if _invalid_dsn(error):
        return [f"setting {setting!r} is not a PostgreSQL URL or DSN: {_masked(first_line(str(error)), url)}"]
    note(
        f"the database of setting {setting!r} is unreachable at start-up ({first_line(str(error))}); "
        'serving anyway: its tools answer "database unreachable" until it is back'
    )
    return []


def _attempt(url: str, application_name: str, seconds: float) -> tuple[bool, BaseException | None]:
    """(whether the attempt finished within `seconds`, the error it ended with)."""
    done = threading.Event()
    outcome: list[BaseException | None] = [None]

    def login() -> None:
        try:
            import psycopg

            psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=max(2, round(seconds)),
                application_name=application_name,
            ).close()
        except Exception as err:  # reported by the caller, whatever it is
            outcome[0] = err
        finally:
            done.set()

    threading.Thread(target=login, name="lynxc-login-check", daemon=True).start()
    if not done.wait(seconds):
        return False, None
    return True, outcome[0]


def _invalid_dsn(err: BaseException) -> bool:
    """A DSN libpq cannot parse (psycopg raises ProgrammingError before any connection)."""
    import psycopg

    return isinstance(err, psycopg.ProgrammingError)


def _masked(message: str, url: str) -> str:
    """libpq's parse error with each quoted piece of the DSN masked: it quotes the piece it could
    not read, which may be the password (`unexpected spaces found in "pass word"`), where no
    URL or key=value pattern recognises one."""
    return _QUOTED.sub(lambda m: '"***"' if m.group(1) in url else m.group(0), message)
