"""The SQL of a session list (`GET /sessions`, `obsctl sessions list`) built from a
SessionFilter: the same text on every backend but for what a `SessionDialect` names (the
placeholder, the wall-duration expression, reading a metadata key).

Adding a numeric filter or a sort key is one entry here: `_RANGES` maps a filter name of
models/sessions.py SESSION_RANGES to its column, `sort_column` a sort key of
SESSION_SORT_KEYS to its expression (for cost: `"cost": "cost_usd"` in both).
"""

from __future__ import annotations

from dataclasses import dataclass

from obsctl.models.sessions import SessionFilter

_TOKENS = "(total_tokens_in + total_tokens_out)"
_RANGES = {"tokens": _TOKENS, "cost": "cost_usd"}
# Sessions having an event with one of these values (the `events` column of each filter).
_EVENT_FILTERS = (("models", "model"), ("tools", "tool_name"))


@dataclass(frozen=True)
class SessionDialect:
    """What differs between backends: `mark` the placeholder, `duration` the wall-clock
    duration in ms of an ended session (the text of its index), `metadata` a template reading
    the key of each {key} parameter of sessions.metadata as text (a JSON string as is, a
    number as its digits, true/false), `json_path` when that parameter is a JSON path rather
    than the key, `row_key` the column naming a row (what the inner page query returns)."""

    mark: str
    duration: str
    metadata: str
    json_path: bool
    row_key: str

    def sort_column(self, key: str) -> str:
        """The expression a sort key orders by; never NULL (a session still active has
        duration -1, so it comes last when the longest come first)."""
        return {
            "start": "started_at",
            "duration": f"COALESCE(CASE WHEN ended_at IS NOT NULL THEN {self.duration} END, -1)",
            "tokens": _TOKENS,
            "errors": "error_count",
            # Unpriced sessions (NULL) sort as -1: last when the most expensive come first.
            "cost": "COALESCE(cost_usd, -1)",
        }[key]


def where(selection: SessionFilter, dialect: SessionDialect) -> tuple[list[str], list]:
    """The WHERE clauses (all must hold) and their parameters."""
    m = dialect.mark
    clauses: list[str] = []
    params: list = []

    def any_of(column: str, values: tuple) -> str:
        params.extend(values)
        return f"{column} IN ({', '.join([m] * len(values))})"

    if selection.agents:
        clauses.append(any_of("agent_name", selection.agents))
    if selection.status:
        clauses.append(f"status = {m}")
        params.append(selection.status)
    if selection.started_from:
        clauses.append(f"started_at >= {m}")
        params.append(selection.started_from)
    if selection.started_to:
        clauses.append(f"started_at < {m}")
        params.append(selection.started_to)
    for name, column in _RANGES.items():
        for bound, op in (("min", ">="), ("max", "<=")):
            value = getattr(selection, f"{bound}_{name}")
            if value is not None:
                clauses.append(f"{column} {op} {m}")
                params.append(value)
    if selection.has_errors is not None:
        clauses.append("error_count > 0" if selection.has_errors else "error_count = 0")
    for attr, column in _EVENT_FILTERS:
        values = getattr(selection, attr)
        if values:
            # IS NOT NULL lets the partial index on (column, session_id) serve it.
            clauses.append(f"session_id IN (SELECT session_id FROM events WHERE {column} IS NOT NULL "
                           f"AND {any_of(column, values)})")
    if selection.error_types:
        clauses.append(f"session_id IN (SELECT session_id FROM events WHERE is_error = 1 "
                       f"AND {any_of('event_type', selection.error_types)})")
    for key, value in selection.tags:
        clauses.append(f"session_id IN (SELECT session_id FROM session_tags WHERE key = {m} AND value = {m})")
        params += [key, value]
    for key, value in selection.metadata:
        clauses.append(f"{dialect.metadata.format(key=m)} = {m}")
        named = f'$."{key}"' if dialect.json_path else key
        params += [named] * dialect.metadata.count("{key}") + [value]
    return clauses, params


def page(selection: SessionFilter, dialect: SessionDialect, after: tuple | None) -> tuple[str, str, list]:
    """(keyset clause or "", ORDER BY, its parameters): rows after the sort key `after`
    ((value, session_id) of the last row of the previous page). Ties are in session_id order."""
    column = dialect.sort_column(selection.sort)
    direction = "DESC" if selection.descending else "ASC"
    order = f"{column} {direction}, session_id"
    if after is None:
        return "", order, []
    m = dialect.mark
    beyond = "<" if selection.descending else ">"
    # The first term is a range an index on the column can seek to; the second drops the
    # ties already shown.
    clause = f"{column} {beyond}= {m} AND ({column} {beyond} {m} OR session_id > {m})"
    value, session_id = after
    return clause, order, [value, value, session_id]


def select(selection: SessionFilter, dialect: SessionDialect, columns: str, *, after: tuple | None,
           limit: int, offset: int) -> tuple[str, list]:
    """The page's query: `columns` and the sort value (as `sort_value`, last) of the matching
    sessions in order, after `after`, `limit` rows from `offset`."""
    clauses, params = where(selection, dialect)
    keyset, order, keyset_params = page(selection, dialect, after)
    if keyset:
        clauses.append(keyset)
        params += keyset_params
    condition = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    column = dialect.sort_column(selection.sort)
    m, key = dialect.mark, dialect.row_key
    # The page is found first (on an index alone when one serves the order), so an offset
    # skips index entries, not session rows.
    sql = (f"SELECT {columns}, {column} FROM sessions WHERE {key} IN (SELECT {key} FROM sessions "
           f"{condition} ORDER BY {order} LIMIT {m} OFFSET {m}) ORDER BY {order}")
    return sql, [*params, limit, offset]


def count(selection: SessionFilter, dialect: SessionDialect) -> tuple[str, list]:
    """The query counting every match: the session_stats rollup when the filter is at most a
    status (whatever the number of sessions), else a COUNT over the same WHERE."""
    if selection.only_status():
        condition, params = (f"WHERE status = {dialect.mark}", [selection.status]) if selection.status else ("", [])
        # SUM over BIGINT is NUMERIC on PostgreSQL: cast back so the count is an int.
        return f"SELECT CAST(COALESCE(SUM(sessions), 0) AS BIGINT) FROM session_stats {condition}", params
    clauses, params = where(selection, dialect)
    return f"SELECT COUNT(*) FROM sessions WHERE {' AND '.join(clauses)}", params
