"""Shell completion of option and argument values (`obsctl sessions list --status <TAB>`).

Fixed vocabularies (metrics, statuses, formats, operators, severities) come from where they
are declared. Agent names and session ids come from the database the command line names
(--db, $OBSCTL_DATABASE_URL, $OBSCTL_DB, else the default file), through one cheap read: a
rollup for agents, a range of the primary key for session ids. Completion must never break a
shell: a missing, damaged or unreachable database, or one slower than READ_TIMEOUT_S,
completes nothing, silently; under --url (a server, not a database) too.

The shell scripts are completions/ (`make completions`) or `obsctl --install-completion`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable

import typer

from obsctl.text import CONTROL
from obsctl.vocabulary import METRICS, OPERATORS, SESSION_STATUSES

LIMIT = 100  # values offered at most: a shell shows no more usefully
READ_TIMEOUT_S = 3.0


def _starting(values: Iterable, incomplete: str) -> list:
    return [v for v in values if (v[0] if isinstance(v, tuple) else v).startswith(incomplete)]


def metrics(incomplete: str) -> list[tuple[str, str]]:
    return _starting(METRICS.items(), incomplete)


def operators(incomplete: str) -> list[str]:
    from obsctl.vocabulary import operator_words

    return _starting((*OPERATORS, *operator_words(OPERATORS)), incomplete)


def sla_operators(incomplete: str) -> list[str]:
    from obsctl.models.sla import OPERATORS as SLA_OPERATORS
    from obsctl.vocabulary import operator_words

    return _starting((*SLA_OPERATORS, *operator_words(SLA_OPERATORS)), incomplete)


def severities(incomplete: str) -> list[str]:
    from obsctl.models.alerts import SEVERITIES

    return _starting(SEVERITIES, incomplete)


def session_statuses(incomplete: str) -> list[str]:
    return _starting(SESSION_STATUSES, incomplete)


def session_sorts(incomplete: str) -> list[str]:
    from obsctl.services.sessions.filters import sort_choices

    return _starting(sort_choices(), incomplete)


def error_types(incomplete: str) -> list[str]:
    from obsctl.vocabulary import ERROR_TYPES

    return _starting(sorted(ERROR_TYPES), incomplete)


def delivery_statuses(incomplete: str) -> list[str]:
    from obsctl.models.webhooks import DELIVERY_STATUSES

    return _starting(DELIVERY_STATUSES, incomplete)


def webhook_formats(incomplete: str) -> list[str]:
    from obsctl.models.webhooks import FORMATS

    return _starting(FORMATS, incomplete)


def export_formats(incomplete: str) -> list[str]:
    from obsctl.services.sessions import bulk_export, export

    return _starting(tuple(dict.fromkeys(export.FORMATS + bulk_export.FORMATS)), incomplete)


def ingest_formats(incomplete: str) -> list[str]:
    from obsctl.services.ingest.source import FORMATS

    return _starting((*FORMATS, "otlp-json"), incomplete)


def agents(ctx: typer.Context, incomplete: str) -> list[str]:
    """Agent names of the database, starting with what is typed."""
    from obsctl.services.sessions import agent_names

    return _from_database(ctx, lambda store: agent_names(store, incomplete, LIMIT))


def sessions(ctx: typer.Context, incomplete: str) -> list[str]:
    """Session ids of the database, starting with what is typed."""
    from obsctl.services.sessions import session_ids

    return _from_database(ctx, lambda store: session_ids(store, incomplete, LIMIT))


def _from_database(ctx: typer.Context, read: Callable) -> list[str]:
    try:
        from obsctl.cli.target import Layer, resolve_target, typed_layer
        from obsctl.config import Settings
        from obsctl.services.storage import open_store

        target = resolve_target(typed_layer(ctx), Layer.environment(os.environ))
        if target.url:
            return []  # a server, not a database: nothing to read here
        settings = Settings.from_env(db_path=target.db)
    except Exception:  # noqa: BLE001 - completion completes nothing rather than fail
        return []
    found: list[str] = []

    def work() -> None:
        try:
            store = open_store(settings, mode="read")
            try:
                found.extend(read(store))
            finally:
                store.close()
        except Exception:  # noqa: BLE001
            return

    # A thread, so that a database that does not answer (a PostgreSQL host that drops packets)
    # costs the shell READ_TIMEOUT_S, not the connection timeout.
    reader = threading.Thread(target=work, daemon=True)
    reader.start()
    reader.join(READ_TIMEOUT_S)
    if reader.is_alive():
        return []
    # The shell prints candidates as they are: a stored name holding control characters is
    # not offered (it could not be typed anyway).
    return [value for value in found if not CONTROL.search(value)]
