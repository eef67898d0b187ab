"""Ingest validation: decoding and validating one `POST /events` body of 1000 events, three ways.

- today: orjson.loads + parse_batch_body + validate_events (the service's own path: rows out)
- msgspec: msgspec.json.decode(body, type=Batch) into constrained Structs, then the same rows
- pydantic: TypeAdapter(Batch).validate_json(body) into constrained models, then the same rows

The two library paths state the constraints the API documents (lengths, ranges, object
fields, no key beside "events"; msgspec uses the declared models/ingest.EventBatch) but not the service's messages, unknown-field warnings or the
future-skew rule, so they measure the least a library-based single validation would cost.

Run: .venv/bin/python bench/validation.py [--events 1000] [--repeat 200]
"""


import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dataset import generate_events  # noqa: E402

from obsctl.services.ingest import parse_batch_body, validate_events  # noqa: E402
from obsctl.timeutil import normalize_ts  # noqa: E402
from obsctl.vocabulary import is_error_event  # noqa: E402

MAX_TOKENS = 2**40


def _msgspec_path():
    import msgspec

    from obsctl.models.ingest import EventBatch as Batch  # the declared body of POST /events

    decoder = msgspec.json.Decoder(Batch)
    encode = msgspec.json.encode

    def run(body: bytes) -> list[tuple]:
        rows = []
        for e in decoder.decode(body).events:
            tool = e.tool_call
            rows.append((
                e.event_id, e.session_id or "unknown", e.event_type or "generic",
                normalize_ts(e.timestamp), e.model, e.tokens_in, e.tokens_out, e.duration_ms,
                *(encode(v).decode() if v is not None else None
                  for v in (e.input_data, e.output_data, tool, e.decision_trace, e.metadata)),
                e.agent_name, tool.get("name") if tool else None,
                1 if is_error_event(e.event_type or "generic", e.output_data, tool) else 0, e.parent_id,
            ))
        return rows

    return run


def _pydantic_path():
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    Id = Annotated[str, Field(min_length=1, max_length=128)]
    Text = Annotated[str, Field(max_length=256)]
    Count = Annotated[int, Field(ge=0, le=MAX_TOKENS, strict=True)]
    Obj = dict[str, Any]

    class Event(BaseModel):
        event_type: Annotated[str, Field(min_length=1, max_length=256)] | None = None
        session_id: Id | None = None
        event_id: Id | None = None
        timestamp: str | None = None
        model: Text | None = None
        agent_name: Text | None = None
        tokens_in: Count | None = None
        tokens_out: Count | None = None
        duration_ms: Annotated[float, Field(ge=0, le=1e15)] | None = None
        input_data: Obj | None = None
        output_data: Obj | None = None
        tool_call: Obj | None = None
        decision_trace: Obj | None = None
        metadata: Obj | None = None
        status: str | None = None
        total_tokens_in: Count | None = None
        total_tokens_out: Count | None = None
        parent_id: str | None = None

    class Batch(BaseModel):
        model_config = ConfigDict(extra="forbid")
        events: list[Event]

    adapter = TypeAdapter(Batch)
    dumps = orjson.dumps

    def run(body: bytes) -> list[tuple]:
        rows = []
        for e in adapter.validate_json(body).events:
            tool = e.tool_call
            rows.append((
                e.event_id, e.session_id or "unknown", e.event_type or "generic",
                normalize_ts(e.timestamp), e.model, e.tokens_in, e.tokens_out, e.duration_ms,
                *(dumps(v).decode() if v is not None else None
                  for v in (e.input_data, e.output_data, tool, e.decision_trace, e.metadata)),
                e.agent_name, tool.get("name") if tool else None,
                1 if is_error_event(e.event_type or "generic", e.output_data, tool) else 0, e.parent_id,
            ))
        return rows

    return run


def _today_path(body: bytes) -> list:
    events = parse_batch_body(orjson.loads(body), max_batch=10**9)
    valid, errors = validate_events(events)
    assert not errors, errors[:3]
    return valid


def measure(paths: dict, body: bytes, events: int, repeat: int) -> dict[str, float]:
    """Median events/s of each path over `repeat` rounds; the paths take turns in each round,
    so a busy machine slows them alike."""
    times: dict[str, list[float]] = {name: [] for name in paths}
    for run in paths.values():
        run(body)  # warm up (imports, caches)
    for _ in range(repeat):
        for name, run in paths.items():
            started = time.perf_counter()
            run(body)
            times[name].append(time.perf_counter() - started)
    return {name: events / statistics.median(t) for name, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)

    sessions = args.events // 50 + 1
    events = list(generate_events(sessions, 50, seed=11))[: args.events]
    body = orjson.dumps({"events": events})
    paths = {
        "today (orjson + validate_events)": _today_path,
        "msgspec (decode into Structs + rows)": _msgspec_path(),
        "pydantic v2 (validate_json + rows)": _pydantic_path(),
    }
    print(f"one body of {len(events)} events ({len(body) / 1024:.0f} KiB), median of {args.repeat} runs")
    for name, rate in measure(paths, body, len(events), args.repeat).items():
        print(f"  {name:40s} {rate:>12,.0f} events/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
