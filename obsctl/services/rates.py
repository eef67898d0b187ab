"""The rates obsctl reports: one name, one numerator and one denominator each.

Body events are the events other than the lifecycle types `session_start` and
`session_end`: the steps an agent took, which are what can fail.

| name               | numerator                         | denominator                 |
|--------------------|-----------------------------------|-----------------------------|
| error_event_rate   | error_events (errors among them)  | body_events                 |
| error_session_rate | error_sessions (status `error`)   | sessions                    |
| tool_error_rate    | tool events that are errors       | tool events                 |
| completion_rate    | completed_sessions                | sessions                    |

Where the spec fixes the name `error_rate` it keeps it, and says which rate it is:

- analytics `overview.error_rate` is the error_session_rate of all sessions;
- the alert/SLA metric `error_rate` is the error_event_rate of a time window;
- the triage `metrics.error_rate` and the postmortem candidates' `error_rate` are the
  session's error_event_rate; scorecard trend points' `error_rate` is the day's.

The views that show a rate also carry its two counts under the names above. A session's
`event_count` and `error_count` (as in `sessions list`) count every stored event, lifecycle
events included, so they are not the denominator of any rate.

Every rate is a percentage from 0 to 100. Reports round it half up to two decimals and their
rules (severities) compare the rate as reported; alert and SLA metric values keep full precision
so that a threshold comparison is exact. With a zero denominator a session's rate (and the
analytics overview's) is 0; a window's (alert and SLA metrics, scorecards) is null.
"""

from __future__ import annotations

from dataclasses import dataclass

from obsctl.text import MISSING
from obsctl.vocabulary import RATE_DEFINITIONS

# One sentence per name, for the field descriptions of the API document (declared in
# obsctl/vocabulary.py, where the models read them).
DEFINITIONS = RATE_DEFINITIONS


def percent(part: int, whole: int) -> float | None:
    """`part` of `whole` in percent, rounded half up to two decimals; None when `whole` is 0.

    Computed in integers (hundredths of a percent), so the SQL that ranks sessions by the
    same rate (store/sqlite/triage.py) gets exactly the same number.
    """
    return hundredths(part, whole) / 100 if whole else None


def hundredths(part: int, whole: int) -> int:
    """`part` of `whole` in hundredths of a percent, rounded half up (0 when `whole` is 0)."""
    return (20000 * part + whole) // (2 * whole) if whole else 0


def format_percent(rate: float | None) -> str:
    """A rate as text: `62.5%`, `25%`, MISSING (`-`) for None."""
    return MISSING if rate is None else f"{rate:g}%"


def of(part: int, whole: int, noun: str = "events") -> str:
    """The rate with its denominator, the way every text output shows one:
    `5 of 8 events (62.5%)`."""
    return f"{part:,} of {whole:,} {noun} ({format_percent(percent(part, whole) or 0.0)})"


@dataclass(frozen=True, slots=True)
class SessionEventCounts:
    """One session's event counts, and its error event rate.

    Triage, the postmortem and the candidates list all build their numbers from this, so
    they agree on every session.
    """

    event_count: int   # every stored event, lifecycle included (as `sessions list`)
    error_count: int   # the errors among them
    body_events: int   # without session_start/session_end
    error_events: int  # the errors among the body events

    @property
    def error_event_rate(self) -> float:
        """Percent of the body events that are errors, two decimals (0 without any)."""
        return percent(self.error_events, self.body_events) or 0.0

    def view(self) -> dict:
        """The counts and the rate under their public names."""
        return {"event_count": self.event_count, "error_count": self.error_count,
                "body_events": self.body_events, "error_events": self.error_events,
                "error_event_rate": self.error_event_rate}

    def describe(self) -> str:
        """`5 of 8 events failed (62.5%)`."""
        return (f"{self.error_events:,} of {self.body_events:,} events failed "
                f"({format_percent(self.error_event_rate)})")
