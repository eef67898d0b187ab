"""`obsctl search` through a server prints what it prints on the database."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args", [
    ("search", "timeout", "--json"),
    ("search", "timeout"),
    ("search", '"rate limit"', "--agent", "research-agent", "--agent", "support-bot", "--limit", "2", "--json"),
    ("search", "rate*", "--since", "2026-11-20T00:00:00Z", "--until", "2026-11-21T00:00:00Z", "--sort", "rank"),
    ("search", "timeout", "--session", "research-002", "--type", "tool_error", "--mark-start", "<", "--mark-end", ">"),
    ("search", '"open'),
    ("search", "x", "--since", "soon"),
])
def test_search_prints_the_same(remote, args):
    remote.same(*args)
