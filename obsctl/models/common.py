"""Field types shared by the declared response models."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.vocabulary import GRADES
from obsctl.vocabulary import RATE_DEFINITIONS as DEFINITIONS

# A character that Python's str.strip() keeps (not str.isspace()): the services call a string
# blank when strip() leaves nothing. ECMA-262's \S differs: it matches U+001C..U+001F, which
# Python strips, and not U+FEFF, which Python keeps.
NOT_BLANK = "[^\\t-\\r\\x1c- \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"

Timestamp = Annotated[str, Meta(description="UTC ISO 8601 with milliseconds and Z",
                                examples=["2026-11-21T20:42:19.123Z"])]
Count = Annotated[int, Meta(ge=0)]
Percent = Annotated[float, Meta(ge=0, le=100)]
JsonObject = dict[str, Any]
# A field of an input that is accepted and ignored (so that what was read can be sent back).
ReadOnly = Annotated[Any, Meta(description="Read-only: accepted and ignored",
                               extra_json_schema={"readOnly": True})] | UnsetType
SAME_AS_ERROR_EVENT_RATE = "The error_event_rate under the spec's name"


def enum_of(values) -> Meta:
    """A string field's constraint: one of `values` (a tuple, or the keys of a dict, declared
    elsewhere), listed in their declared order (a Literal's enum would come out sorted).
    Written `Annotated[str, enum_of(VALUES)]`, a type that type checkers read too."""
    return Meta(extra_json_schema={"enum": list(values)})


Grade = Annotated[str, enum_of(GRADES)]


def within(param, **meta) -> Meta:
    """An integer field's bounds: those of an IntParam (obsctl.params) declared elsewhere.
    Written `Annotated[int, within(PARAM)]`; the Meta keeps the IntParam (`extra["param"]`),
    so a query parameter declared this way is documented as the service checks it."""
    return Meta(ge=param.low, le=param.high, extra={"param": param}, **meta)


def rate_of(name: str, note: str = "") -> Meta:
    """A field described by the rate vocabulary's definition of `name` (obsctl/vocabulary.py),
    plus `note` (e.g. which rate a spec field named `error_rate` is). Written
    `Annotated[Count, rate_of("event_count")]`."""
    return Meta(description=DEFINITIONS[name] + (f". {note}" if note else ""))


class SessionCounts(Struct):
    """A session's event counts and error event rate, in triage metrics, postmortem reports and
    candidates alike (services/rates.py SessionEventCounts.view)."""

    event_count: Annotated[Count, rate_of("event_count")]
    error_count: Annotated[Count, rate_of("error_count")]
    body_events: Annotated[Count, rate_of("body_events")]
    error_events: Annotated[Count, rate_of("error_events")]
    error_event_rate: Annotated[Percent, rate_of("error_event_rate")]


class ModelCost(Struct):
    model: str | None
    calls: Count
    tokens_in: Count
    tokens_out: Count
    cost_usd: float | None
    priced: bool


class FailedStepsCost(Struct):
    events: Count
    tokens_in: Count
    tokens_out: Count
    total_tokens: Count
    cost_usd: float | None
    token_share_pct: float


class ErrorDetail(Struct, omit_defaults=True):
    """One problem of a rejected input: which event (index) and field, and what is wrong"""

    index: int | UnsetType = UNSET
    field: str | None | UnsetType = UNSET
    message: str | UnsetType = UNSET


class Error(Struct, omit_defaults=True):
    """Every error body"""

    error: str
    details: list[ErrorDetail] | UnsetType = UNSET
