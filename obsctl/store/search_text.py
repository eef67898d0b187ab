"""What search reads of an event's text, the same on every store: how much of each field is
indexed, the windows snippets are made from, and the time a search may take
(docs/search.md, docs/security.md).

- **Indexed text**: the first INDEXED_CHARS characters of each of the four fields (their JSON
  text); past them a field is not indexed. The stores apply it in SQL (the SQLite triggers,
  the PostgreSQL generated column) with the same count; `indexed_text` is the same cut for
  code that indexes from Python.
- **Snippets** come from a window of about WINDOW_CHARS characters, never from a whole field:
  the engines' highlighters (FTS5 `snippet()`, `ts_headline`) cost the square of the matches
  in what they are given, so a field repeating one word 30,000 times took seconds to minutes.
  `first_matches` reads each result's fields in COLUMNS order, in windows of SCAN_CHARS,
  asking the store's engine which of them match, a few windows per result at a time; the
  first that matches is read again in windows of WINDOW_CHARS, and the first of those that
  matches, widened by CONTEXT_CHARS on each side, is the text highlighted. Windows overlap by
  WINDOW_OVERLAP characters, so a phrase whose text is shorter than that lies whole in one of
  them. (Reading in large windows first costs a field's text about once; reading it in small
  ones alone cost it 1.6 times, and PostgreSQL's parser does about 3 MB/s.)
- **Time budget**: a search's statements stop at the time budget the service gives (an SQLite
  progress handler, PostgreSQL's statement_timeout) and the search answers `budget_exceeded()`.

Nothing here knows an engine: the stores import it (obsctl/store/sqlite/search.py,
obsctl/store/postgres/search.py), and so may an indexer that runs outside the ingest
transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from obsctl.errors import QueryTimeout

# The indexed columns, in the order a snippet's field is chosen.
COLUMNS = ("input_data", "output_data", "tool_call", "decision_trace")
INDEXED_CHARS = 32_768
SCAN_CHARS = 4_000
WINDOW_CHARS = 400
WINDOW_OVERLAP = 150
CONTEXT_CHARS = 100
# Windows asked about per result in the first round; each later round asks twice as many
# (so at most about half of the windows read are past the first match).
_FIRST_ROUND = 1
_GROWTH = 2
_WORD_CHAR = re.compile(r"\w")


def indexed_text(value: str | None) -> str | None:
    """The part of a field's text that is indexed (None stays None)."""
    return None if value is None else value[:INDEXED_CHARS]


def budget_exceeded(seconds: float) -> QueryTimeout:
    """The error of a search stopped at its time budget."""
    return QueryTimeout(
        f"the search was stopped after its time budget of {seconds:g} s; narrow it (rarer words, "
        f"a shorter time window, an agent, a session or a type) or retry when the server is less busy")


def _inside_word(text: str, at: int) -> bool:
    return 0 < at < len(text) and bool(_WORD_CHAR.match(text[at - 1])) and bool(_WORD_CHAR.match(text[at]))


def _cut(text: str, at: int, floor: int) -> int:
    """`at`, moved back to the nearest place not inside a word, but not below `floor` (there,
    a run of word characters longer than the distance is cut as it is)."""
    cut = at
    while cut > floor and _inside_word(text, cut):
        cut -= 1
    return cut if cut > floor else at


def windows(text: str, size: int = WINDOW_CHARS, overlap: int = WINDOW_OVERLAP) -> Iterator[tuple[int, int]]:
    """(start, end) of the windows of `text`, in order: each at most `size` characters, cut
    between words where one is near, and overlapping the next by at least `overlap`, so any
    stretch of `overlap` characters or fewer lies whole in one window."""
    start, length = 0, len(text)
    while True:
        if length - start <= size:
            yield start, length
            return
        end = _cut(text, start + size, start + size - overlap // 2)
        yield start, end
        start = _cut(text, end - overlap, end - overlap - overlap // 2)


@dataclass(frozen=True, eq=False)
class Window:
    """`source[start:end]`, a window of the indexed text `source` of the field COLUMNS[field]."""

    field: int
    source: str
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.source[self.start:self.end]

    @property
    def cut_before(self) -> bool:
        """The field's text goes on before the window."""
        return self.start > 0

    @property
    def cut_after(self) -> bool:
        return self.end < len(self.source)

    def widened(self, margin: int = CONTEXT_CHARS) -> Window:
        """The window and up to `margin` more characters on each side (cut between words):
        what a snippet is made from, so that the match has words around it wherever it is in
        the window."""
        start = max(0, _cut(self.source, max(0, self.start - margin), max(0, self.start - margin - margin // 2)))
        end = min(len(self.source), self.end + margin)
        return Window(self.field, self.source, start, _cut(self.source, end, self.end + margin // 2))


def _result_windows(fields: Sequence[str | None]) -> Iterator[Window]:
    for field, text in enumerate(fields):
        if not text:
            continue
        for start, end in windows(text, SCAN_CHARS):
            yield Window(field, text, start, end)


def _parts(window: Window) -> list[Window]:
    """The small windows of a window read in SCAN_CHARS."""
    return [Window(window.field, window.source, window.start + start, window.start + end)
            for start, end in windows(window.text)]


def first_matches(results: Sequence[Sequence[str | None]],
                  matching: Callable[[list[str]], set[int]]) -> list[Window | None]:
    """For each result (the indexed text of its fields, in COLUMNS order), its first window
    that matches the query, widened (the text its snippet is made from), or None when none
    does (a phrase spread over more than WINDOW_OVERLAP characters, say). `matching(texts)`
    answers which of the texts match the query (any of its terms), by their places in the
    list. It is called once per round on the next large windows of every result still
    looking (one each, then two, four, ...), then once on the small windows of those found
    that are longer than one."""
    found: list[Window | None] = [None] * len(results)
    looking = {n: _result_windows(fields) for n, fields in enumerate(results)}
    ask = _FIRST_ROUND
    while looking:
        batch: list[tuple[int, Window]] = []
        for n, walk in list(looking.items()):
            taken = list(islice(walk, ask))
            if len(taken) < ask:  # this result's last windows
                del looking[n]
            batch += [(n, w) for w in taken]
        if not batch:
            break
        matched = matching([w.text for _, w in batch])
        for place, (n, window) in enumerate(batch):
            if place in matched and found[n] is None:
                found[n] = window
                looking.pop(n, None)
        ask *= _GROWTH
    chosen: list[Window | None] = [None] * len(results)
    parts: list[tuple[int, Window]] = []
    for n, hit in enumerate(found):
        if hit is not None:
            split = _parts(hit)
            if len(split) == 1:  # a short one: it is its only part, and it matched
                chosen[n] = split[0].widened()
            else:
                parts += [(n, part) for part in split]
    matched = matching([part.text for _, part in parts]) if parts else set()
    for place, (n, part) in enumerate(parts):
        if place in matched and chosen[n] is None:
            chosen[n] = part.widened()
    return chosen
