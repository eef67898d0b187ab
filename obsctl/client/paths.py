"""Request paths of the HTTP API: ids placed so that each is one segment naming itself."""

from __future__ import annotations

from urllib.parse import quote

from obsctl.errors import NotFound

# The literal segments of the API's routes that a GET could also read as an id (the
# specification fixes them): an id spelt the same is sent escaped (web/rawpath.py).
_LITERAL_SEGMENTS = frozenset({"batch", "candidates", "compare", "deliveries"})


def api_path(template: str, *ids: str, absent: str) -> str:
    """A request path: `template` with each `{}` replaced by an id, percent-encoded so that an
    id is always one segment naming itself: `api_path("/sessions/{}/explain", "a/b")` is
    `/sessions/a%2Fb/explain`; `.` and `..` are escaped too (HTTP libraries resolve them away)
    and so is an id spelt like a literal route segment (`/triage/%62atch`).

    No URL names an empty id, and none can exist: NotFound(`absent`), the message the service
    gives for it, is raised instead of asking."""
    if any(i == "" for i in ids):
        raise NotFound(absent)
    return template.format(*(_segment(str(i)) for i in ids))


def _segment(value: str) -> str:
    if value in (".", "..") or value in _LITERAL_SEGMENTS:
        return f"%{ord(value[0]):02X}" + value[1:]
    return quote(value, safe="")
