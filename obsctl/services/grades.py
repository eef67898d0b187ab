"""Letter grades of DECISIONS.md, shared by triage reports and scorecards."""

from __future__ import annotations

from obsctl.vocabulary import GRADE_BANDS


def grade_for(score: float) -> str:
    """The letter grade of a 0-100 score exactly as given (no rounding)."""
    for floor, grade in GRADE_BANDS:
        if score >= floor:
            return grade
    return "F"
