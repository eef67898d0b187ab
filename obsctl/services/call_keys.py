"""What makes two tool calls identical, and two outputs the same, for loop detection
(services/triage/facts.LoopFinder).

A call's key is a 64-bit number: a hash of the tool's name and its input written canonically
(object keys sorted), so that {"a": 1, "b": 2} and {"b": 2, "a": 1} are the same input. Ingest
stores it with each tool call (`events.tool_key`), so that a long session's analysis counts and
compares calls in SQL instead of reading every call's JSON; a session read whole computes it
from the same function. Two different calls share a key with a chance of about 2^-64 per pair.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any

import orjson

from obsctl.vocabulary import tool_field

_SORTED = orjson.OPT_SORT_KEYS


def call_key(tool_name: str, tool_call: Any) -> int:
    """The key of a call of `tool_name` with `tool_call`'s input (None without one)."""
    text = orjson.dumps([tool_name, tool_field(tool_call, "input")], option=_SORTED)
    return int.from_bytes(blake2b(text, digest_size=8).digest(), "big", signed=True)


def output_key(tool_call: Any, output_data: str | None) -> bytes | None:
    """What a tool call returned (its output, else the event's output_data JSON text), written
    canonically: equal bytes, the same output. None when it returned nothing."""
    returned = tool_field(tool_call, "output")
    if returned is None and output_data is not None:
        returned = orjson.loads(output_data)
    return None if returned is None else orjson.dumps(returned, option=_SORTED)
