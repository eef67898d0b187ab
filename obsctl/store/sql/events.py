"""What both stores' event reads share (obsctl/store/<backend>/events.py: the bulk export and
the follow, whose positions differ between the engines): the columns of an event line and the
selection's WHERE clauses."""

from __future__ import annotations

from obsctl.models.sessions import EventSelection
from obsctl.store.sql import Dialect
from obsctl.store.tables import EVENT_LINE_COLUMNS

# The columns of an event line, then its session's agent, status and token totals.
EVENT_FROM = (f"{', '.join('e.' + c for c in EVENT_LINE_COLUMNS)}, s.agent_name, s.status, "
              f"s.total_tokens_in, s.total_tokens_out FROM events e JOIN sessions s ON s.session_id = e.session_id")


def selection_where(d: Dialect, selection: EventSelection) -> tuple[list[str], list]:
    """The clauses (to be joined with AND) and parameters of an event selection over
    `events e JOIN sessions s`."""
    clauses: list[str] = []
    params: list = []
    if selection.since is not None:
        clauses.append(f"e.timestamp >= {d.mark}")
        params.append(selection.since)
    if selection.until is not None:
        clauses.append(f"e.timestamp < {d.mark}")
        params.append(selection.until)
    for column, values in (("s.agent_name", selection.agents), ("s.status", selection.statuses),
                           ("e.session_id", selection.session_ids), ("e.event_type", selection.event_types)):
        if values:
            clause, values_params = d.in_list(column, values)
            clauses.append(clause)
            params.extend(values_params)
    return clauses, params
