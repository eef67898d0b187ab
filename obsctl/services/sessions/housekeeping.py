"""Housekeeping of sessions: delete one, tag it, score it.

- `delete_session`: the session, its events, tags, scores and trace links go in one
  transaction; the analytics rollups are adjusted in it, so analytics afterwards equal those of
  a store that never had the session.
- Tags are `key=value` labels (keys of letters, digits, `_`, `.` and `-`, at most 64
  characters; values 1-256 characters, any text): set by `tag_session` or by a `tags` object
  on the session's `session_start` event, and filtered on by `sessions list --tag key=value`
  (`GET /sessions?tag=key:value`).
- Scores are feedback: a name (a tag key's spelling), a finite number and an optional comment,
  given at a time; a session may have any number. The alert and SLA metric `avg_score:NAME`
  averages them (services/metrics.py).
"""

from __future__ import annotations

import math
import re
import uuid
from typing import Any

from obsctl.errors import InvalidInput, NotFound
from obsctl.jsonutil import describe_value
from obsctl.services.sessions.lookup import require_session
from obsctl.store import Store
from obsctl.timeutil import now_iso

MAX_KEY_LEN = 64
MAX_VALUE_LEN = 256
MAX_TAGS = 50
MAX_COMMENT_LEN = 2000
_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
KEY_RULE = "letters, digits, '_', '.' and '-', at most 64 characters"


def check_key(key: Any, what: str = "tag key") -> str:
    """A tag key or score name, else InvalidInput saying what one is made of."""
    if type(key) is not str or _KEY.fullmatch(key) is None:
        raise InvalidInput(f"{what} must be {KEY_RULE}; got {describe_value(key)}")
    return key


def check_value(key: str, value: Any) -> str:
    if type(value) is not str or not value or len(value) > MAX_VALUE_LEN or "\x00" in value:
        raise InvalidInput(f"tag {key!r} must have a text value of 1 to {MAX_VALUE_LEN} characters; "
                           f"got {describe_value(value)}")
    return value


def check_tags(tags: Any) -> dict[str, str]:
    """A `tags` object (key -> value, as a session_start event carries it), validated."""
    if type(tags) is not dict:
        raise InvalidInput(f"tags must be an object of key: value texts; got {describe_value(tags)}")
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"a session has at most {MAX_TAGS} tags; got {len(tags)}")
    return {check_key(k): check_value(k, v) for k, v in tags.items()}


def parse_tag_filter(text: Any) -> tuple[str, str]:
    """`key:value` (HTTP) or `key=value` (CLI) as (key, value): a key holds neither `:` nor `=`,
    so the first of them ends it and the value may hold both."""
    if type(text) is not str:
        raise InvalidInput(f"tag must be key:value; got {describe_value(text)}")
    cut = min((i for i in (text.find(":"), text.find("=")) if i >= 0), default=-1)
    if cut < 0:
        raise InvalidInput(f"tag must be key:value (or key=value); got {describe_value(text)}")
    key, value = text[:cut], text[cut + 1:]
    return check_key(key), check_value(key, value)


def check_tag_filters(values: Any) -> list[tuple[str, str]]:
    """Every `tag` filter of a list request (a session must have them all)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [parse_tag_filter(v) for v in values]


def session_tags(store: Store, session_id: str) -> dict[str, str]:
    return store.sessions.session_tags([session_id]).get(session_id, {})


def tag_session(store: Store, session_id: str, changes: Any) -> dict:
    """Set and remove tags: `changes` maps a key to its new value, or to null to remove it
    (JSON merge patch). Returns `{"session_id", "tags"}`, the tags after the change."""
    if type(changes) is not dict or not changes:
        raise InvalidInput("the body must be an object of tag changes, e.g. {\"team\": \"support\", "
                           "\"old\": null} (null removes a tag)")
    sets = {check_key(k): check_value(k, v) for k, v in changes.items() if v is not None}
    removes = [check_key(k) for k, v in changes.items() if v is None]
    with store.transaction():
        require_session(store, session_id)
        if removes:
            store.sessions.remove_tags(session_id, removes)
        if sets:
            store.sessions.set_tags([(session_id, k, v) for k, v in sets.items()])
        tags = session_tags(store, session_id)
        if len(tags) > MAX_TAGS:  # undone with the transaction
            raise InvalidInput(f"a session has at most {MAX_TAGS} tags; this change would leave {len(tags)}")
    return {"session_id": session_id, "tags": tags}


def score_view(row: dict) -> dict:
    return {"score_id": row["score_id"], "session_id": row["session_id"], "name": row["name"],
            "value": row["value"], "comment": row["comment"], "created_at": row["created_at"]}


def check_score(body: Any) -> tuple[str, float, str | None]:
    """(name, value, comment) from a score body, else InvalidInput."""
    if type(body) is not dict:
        raise InvalidInput(f"a score is an object {{\"name\", \"value\", \"comment\"}}; got {describe_value(body)}")
    unknown = sorted(set(body) - {"name", "value", "comment"})
    if unknown:
        raise InvalidInput(f"unknown score field{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)} "
                           f"(a score has name, value and comment)")
    if "name" not in body or "value" not in body:
        raise InvalidInput("a score needs name and value")
    name = check_key(body["name"], "score name")
    value = body["value"]
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InvalidInput(f"score value must be a finite number; got {describe_value(value)}")
    comment = body.get("comment")
    if comment is not None and (type(comment) is not str or len(comment) > MAX_COMMENT_LEN or "\x00" in comment):
        raise InvalidInput(f"comment must be text of at most {MAX_COMMENT_LEN} characters; "
                           f"got {describe_value(comment)}")
    return name, float(value), comment or None


def score_session(store: Store, session_id: str, body: Any) -> dict:
    """Record a score on a session; returns it (`score_id`, `session_id`, `name`, `value`,
    `comment`, `created_at`). Unknown session: NotFound."""
    name, value, comment = check_score(body)
    score = {"score_id": f"score_{uuid.uuid4().hex[:16]}", "session_id": session_id, "name": name,
             "value": value, "comment": comment, "created_at": now_iso()}
    with store.transaction():
        require_session(store, session_id)
        store.sessions.insert_score(score)
    return score_view(score)


def session_scores(store: Store, session_id: str) -> list[dict]:
    return [score_view(r) for r in store.sessions.session_scores(session_id)]


def delete_session(store: Store, session_id: str) -> dict:
    """Delete a session with its events, tags, scores and OTLP trace links, keeping the
    analytics rollups exact. `{"deleted": true, "session_id", "events_deleted"}`; unknown
    session: NotFound."""
    with store.transaction():
        events = store.sessions.delete_session(session_id)
        if events is None:
            raise NotFound(f"session {session_id!r} not found")
    return {"deleted": True, "session_id": session_id, "events_deleted": events}

