"""A session's events as a tree of spans: each event under the event its `parent_id` names
(an agent step -> its LLM calls -> their tool calls), with its self time.

- Roots, and each node's children, are in time order (the session's event order).
- An orphan (its parent not received, or not in this session) is shown at the root, with its
  `parent_id` kept; when the parent arrives it attaches there, since the tree is built on
  every read.
- An event naming itself as parent is a root. A cycle of parents (a -> b -> a) is cut at its
  earliest event, which becomes a root, so every event is shown exactly once.
- Trees nest at most MAX_DEPTH deep; an event deeper than that is shown at the root.
- `self_time_ms` is the event's duration minus the union of its children's spans (each
  clipped to the parent's span), so overlapping children (parallel tool calls) are not
  counted twice; null when the event has no duration.
"""

from __future__ import annotations

from collections.abc import Sequence

from obsctl.timeutil import parse_ts

MAX_DEPTH = 100


def _start_ms(timestamp: str | None) -> float | None:
    if not timestamp:
        return None
    try:
        return parse_ts(timestamp).timestamp() * 1000.0
    except ValueError:
        return None


def _parents(events: Sequence[dict]) -> list[int | None]:
    """For each event (by position), the position of its parent in the tree, or None for a root."""
    position: dict[str, int] = {}
    for i, e in enumerate(events):
        position.setdefault(e["event_id"], i)
    parent: list[int | None] = []
    for i, e in enumerate(events):
        parent_id = e.get("parent_id")
        p = position.get(parent_id) if parent_id is not None else None
        parent.append(None if p == i else p)
    # Cut cycles at their earliest event: walk up from each event, marking the walk.
    state = [0] * len(events)  # 0 new, 1 on the current walk, 2 done
    for start in range(len(events)):
        walk = []
        cur: int | None = start
        while cur is not None and state[cur] == 0:
            state[cur] = 1
            walk.append(cur)
            cur = parent[cur]
        if cur is not None and state[cur] == 1:  # the walk came back to itself: a cycle
            cycle = walk[walk.index(cur):]
            parent[min(cycle)] = None
        for node in walk:
            state[node] = 2
    # Depth: parents first (a parent may come later in time than its child).
    depth: list[int | None] = [None] * len(events)
    for start in range(len(events)):
        chain = []
        cur = start
        while cur is not None and depth[cur] is None:
            chain.append(cur)
            cur = parent[cur]
        reached = None if cur is None else depth[cur]
        base = -1 if reached is None else reached
        for node in reversed(chain):
            base += 1
            if base > MAX_DEPTH:
                parent[node] = None
                base = 0
            depth[node] = base
    return parent


def _union_ms(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, None
    for lo, hi in sorted(spans):
        if end is None or lo > end:
            total += hi - lo
            end = hi
        elif hi > end:
            total += hi - end
            end = hi
    return total


def _self_time(node: dict, start: float | None, children: list[tuple[dict, float | None]]) -> float | None:
    duration = node.get("duration_ms")
    if duration is None:
        return None
    if start is None:
        return float(duration)
    lo, hi = start, start + duration
    spans = []
    for child, child_start in children:
        child_duration = child.get("duration_ms")
        if child_start is None or child_duration is None:
            continue
        a, b = max(lo, child_start), min(hi, child_start + child_duration)
        if b > a:
            spans.append((a, b))
    return round(max(0.0, duration - _union_ms(spans)), 3)


def build_tree(events: Sequence[dict]) -> list[dict]:
    """The roots of the span tree of `events` (event views in time order): each node is the
    event's view plus `self_time_ms` and `children` (nodes, in time order)."""
    parent = _parents(events)
    nodes = [{**e, "self_time_ms": None, "children": []} for e in events]
    starts = [_start_ms(e.get("timestamp")) for e in events]
    roots: list[dict] = []
    for i, node in enumerate(nodes):
        p = parent[i]
        (roots if p is None else nodes[p]["children"]).append(node)
    index = {id(node): i for i, node in enumerate(nodes)}
    for i, node in enumerate(nodes):
        kids = [(c, starts[index[id(c)]]) for c in node["children"]]
        node["self_time_ms"] = _self_time(node, starts[i], kids)
    return roots


def walk(roots: list[dict]):
    """(depth, node) for every node, depth first in display order, without recursion."""
    stack = [(0, node) for node in reversed(roots)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        stack.extend((depth + 1, child) for child in reversed(node["children"]))


def root_note(node: dict, event_ids: set[str]) -> str | None:
    """Why an event with a parent_id is at the root: None for a true root."""
    parent_id = node.get("parent_id")
    if parent_id is None:
        return None
    if parent_id == node["event_id"]:
        return "names itself as parent"
    if parent_id in event_ids:
        return f"parent {parent_id} is its descendant (a cycle) or too deep"
    return f"parent {parent_id} not received"
