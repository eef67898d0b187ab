"""Error analysis: message fingerprints, error kinds and groups of the same error.

Two messages that differ only in numbers, ids, hex values, UUIDs or quoted values share a
fingerprint, so "retry after 20s (request req_8f3a)" and "retry after 3s (request req_77b1)"
are one group. Kinds (rate_limit, timeout, ...) come from the event type and the message and
drive suggestions, the postmortem's contributing factors and its recommendations.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass

PATTERN_CHARS = 200

# Order matters: quoted values and UUIDs first (they contain digits and hex), then hex,
# durations ("30s" -> "<n>s"), tokens mixing letters and digits (ids), then bare numbers.
_NORMALISERS = (
    (re.compile(r"(?<![\w])(\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`)(?![\w])"), "<str>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE), "<uuid>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\b\d+(?:\.\d+)?(ms|s|sec|secs|seconds|m|min|mins|minutes|h|hours)\b", re.IGNORECASE), r"<n>\1"),
    (re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]+\b", re.IGNORECASE), "<id>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
)

# Error kinds, tried in this order; the first whose event types or message pattern match wins.
_KIND_RULES: tuple[tuple[str, set[str], re.Pattern[str]], ...] = (
    ("rate_limit", {"rate_limit"},
     re.compile(r"rate.?limit|too many requests|\b429\b|quota|throttl", re.IGNORECASE)),
    ("timeout", {"timeout"},
     re.compile(r"time[ds]?.?out|deadline exceeded|took too long", re.IGNORECASE)),
    ("context_length", set(),
     re.compile(r"context (length|window)|maximum context|too many tokens|token limit", re.IGNORECASE)),
    ("auth", {"auth_error"},
     re.compile(r"\b40[13]\b|unauthori[sz]ed|forbidden|permission denied|invalid api key|"
                r"authenticat", re.IGNORECASE)),
    ("not_found", set(), re.compile(r"\b404\b|not found|no such", re.IGNORECASE)),
    ("invalid_input", {"validation_error"},
     re.compile(r"\b4(00|22)\b|invalid|validation|malformed|cannot parse|parse error|schema", re.IGNORECASE)),
    ("server", set(),
     re.compile(r"\b50[0-4]\b|internal server error|service unavailable|bad gateway|overloaded",
                re.IGNORECASE)),
    ("network", set(),
     re.compile(r"connection|refused|reset by peer|unreachable|dns|network", re.IGNORECASE)),
)

KIND_TITLES = {
    "rate_limit": "Rate limiting",
    "timeout": "Timeouts",
    "context_length": "Context length exceeded",
    "auth": "Authentication or permission errors",
    "not_found": "Missing resources (not found)",
    "invalid_input": "Invalid inputs",
    "server": "Upstream server errors",
    "network": "Network failures",
    "other": "Unclassified errors",
}

KIND_SUGGESTIONS = {
    "rate_limit": "Back off exponentially with jitter on rate-limit responses, cap the agent's "
                  "concurrency, and ask for a higher quota if this is normal traffic.",
    "timeout": "Raise the timeout or make the call cheaper (smaller inputs, pagination), and add "
               "a circuit breaker so one slow dependency cannot stall the whole run.",
    "context_length": "Trim or summarise the context before calling the model, or switch to a "
                      "model with a larger context window.",
    "auth": "Check the credentials and permissions the agent uses (expired key, missing scope).",
    "not_found": "Check identifiers and paths before calling, and treat 'not found' as a normal "
                 "outcome the agent can recover from.",
    "invalid_input": "Validate the arguments the agent builds against the tool's schema before "
                     "calling it, and feed the validation message back to the model.",
    "server": "The dependency failed on its side: retry with backoff and give the agent a "
              "fallback path.",
    "network": "Retry transient connection failures with backoff and check connectivity to the "
               "dependency.",
    "other": "Open the first occurrence in the timeline and add handling for this error.",
}


@functools.lru_cache(maxsize=4096)
def normalise_message(message: str) -> str:
    """The message with variable parts replaced by placeholders, lower-cased, one line.
    Cached: a long session repeats its error messages thousands of times."""
    text = " ".join(message.split())
    for pattern, replacement in _NORMALISERS:
        text = pattern.sub(replacement, text)
    return text.lower()[:PATTERN_CHARS]


def fingerprint(event_type: str, tool_name: str | None, pattern: str) -> str:
    """A short stable id of an error group: its event type, tool and normalised message."""
    key = "\x1f".join((event_type, tool_name or "", pattern))
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def classify_error(event_type: str, message: str | None) -> str:
    """The error kind: rate_limit, timeout, context_length, auth, not_found, invalid_input,
    server, network or other. Read from the event type (`rate_limit`, `tool_timeout`, ...)
    and the message, first matching rule wins."""
    type_text = event_type.replace("_", " ")
    for kind, types, pattern in _KIND_RULES:
        if event_type in types or pattern.search(type_text) or (message and pattern.search(message)):
            return kind
    return "other"


@dataclass
class ErrorGroup:
    """Errors sharing a fingerprint, in time order."""

    fingerprint: str
    event_type: str
    tool_name: str | None
    pattern: str
    kind: str
    example: str
    first_seen: str
    last_seen: str
    count: int = 0

    def view(self) -> dict:
        return {
            "fingerprint": self.fingerprint,
            "count": self.count,
            "event_type": self.event_type,
            "tool_name": self.tool_name,
            "kind": self.kind,
            "pattern": self.pattern,
            "example": self.example,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
        }


def group_errors(steps) -> list[ErrorGroup]:
    """Group the error steps by fingerprint; largest group first, then first seen."""
    groups: dict[str, ErrorGroup] = {}
    for step in steps:
        if not step.is_error:
            continue
        group = groups.get(step.fingerprint)
        if group is None:
            group = groups[step.fingerprint] = ErrorGroup(
                fingerprint=step.fingerprint, event_type=step.event_type, tool_name=step.tool_name,
                pattern=step.pattern, kind=step.kind, example=step.message or step.event_type,
                first_seen=step.timestamp, last_seen=step.timestamp,
            )
        group.count += 1
        group.last_seen = step.timestamp
    return sorted(groups.values(), key=lambda g: (-g.count, g.first_seen, g.fingerprint))
