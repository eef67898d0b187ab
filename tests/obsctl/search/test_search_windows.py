"""The windows snippets are made from (obsctl/store/search_text.py): pure text, no store."""

from __future__ import annotations

import random

import pytest

from obsctl.store.search_text import (
    COLUMNS,
    CONTEXT_CHARS,
    SCAN_CHARS,
    WINDOW_CHARS,
    WINDOW_OVERLAP,
    first_matches,
    windows,
)


def sample_text(seed: int, length: int) -> str:
    rng = random.Random(seed)
    words = ["timeout", "a", "retry_after", "HTTP", "503", '{"k":', "x" * 90, "é", "fetch-url", "\n"]
    text = ""
    while len(text) < length:
        text += rng.choice(words) + rng.choice([" ", "", ", ", '"'])
    return text[:length]


@pytest.mark.parametrize("seed", range(20))
def test_windows_cover_the_text_and_hold_every_short_stretch_whole(seed):
    text = sample_text(seed, random.Random(seed).randrange(1, 5000))
    spans = list(windows(text))
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (start, end), (next_start, _) in zip(spans, spans[1:], strict=False):
        assert 0 < end - start <= WINDOW_CHARS
        assert start < next_start <= end - WINDOW_OVERLAP  # they advance and overlap
    for at in range(0, max(1, len(text) - WINDOW_OVERLAP), 37):
        stretch = (at, min(len(text), at + WINDOW_OVERLAP))
        assert any(s <= stretch[0] and stretch[1] <= e for s, e in spans), stretch


def test_windows_are_cut_between_words_when_one_is_near():
    text = " ".join(f"word{n:04d}" for n in range(1000))
    for start, end in windows(text):
        assert start == 0 or text[start - 1] == " " or text[start] == " "
        assert end == len(text) or text[end] == " " or text[end - 1] == " "


def test_the_first_matching_window_is_chosen_field_by_field_asking_few_at_a_time():
    late = "filler " * 2000 + "needle"
    results = [(None, "needle at once", None, "needle"), ("nothing here", None, late, None), ("nothing", None, None, None)]
    asked: list[int] = []

    def matching(texts: list[str]) -> set[int]:
        asked.append(len(texts))
        return {n for n, text in enumerate(texts) if "needle" in text}

    first, deep, none = first_matches(results, matching)
    assert (COLUMNS[first.field], first.text, first.cut_before, first.cut_after) == (
        "output_data", "needle at once", False, False)
    assert COLUMNS[deep.field] == "tool_call" and deep.text.endswith("filler needle") and deep.cut_before
    assert len(deep.text) <= WINDOW_CHARS + 2 * CONTEXT_CHARS  # highlighted: a small window, widened
    assert none is None
    # One large window of each result, then two of each still looking, ...; then the small
    # windows of the large one found in the long field (the short field's is its only one).
    large = len(list(windows(late, SCAN_CHARS)))
    assert asked[:2] == [3, 2] and sum(asked[:-1]) < 3 + 2 * large
    assert 1 < asked[-1] <= len(list(windows("x " * (SCAN_CHARS // 2))))
