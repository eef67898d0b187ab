"""Letter grades of DECISIONS.md, shared by triage reports and scorecards."""

from __future__ import annotations

GRADE_BANDS = ((95, "A+"), (90, "A"), (85, "B+"), (80, "B"), (70, "B-"), (65, "C+"), (60, "C"),
               (50, "D"))


def grade_for(score: float) -> str:
    """The letter grade of a 0-100 score exactly as given (no rounding)."""
    for floor, grade in GRADE_BANDS:
        if score >= floor:
            return grade
    return "F"
