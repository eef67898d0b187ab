"""GenAI evaluation results as session scores.

An evaluator that judged a model call (or an agent's run) reports each result as a
`gen_ai.evaluation.result` event: an OTLP log record in the judged span's trace and span, with
`gen_ai.evaluation.name`, `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label` and
`gen_ai.evaluation.explanation` (tests/data/otlp/genai-evals/). Each becomes a score of the
judged span's session (`POST /sessions/<id>/scores` would give the same): named by the
evaluation, valued by its score, the label and the explanation as its comment, given at the
record's time. Its id comes from the record's content, so an exporter's retry adds nothing.
A result without a numeric score (a label alone) is kept with the span's event only.
"""

from __future__ import annotations

import math
import re

from obsctl.services.otlp.attributes import parse_json
from obsctl.services.otlp.mapping import ns_to_iso

EVALUATION_EVENT = "gen_ai.evaluation.result"
# A score's name is spelt as a tag key (services/sessions/housekeeping.py).
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_NAME = 64
_MAX_COMMENT = 2000


def evaluation_score(record, key: str, session_id: str) -> dict | None:
    """The score of one `gen_ai.evaluation.result` log record in `session_id`, or None when it
    has no numeric score."""
    attributes = record.attributes
    body = parse_json(record.body)
    body = body if isinstance(body, dict) else {}
    value = attributes.get("gen_ai.evaluation.score.value", body.get("score"))
    if type(value) not in (int, float) or not math.isfinite(value):
        return None
    name = _NAME_CHARS.sub("_", str(attributes.get("gen_ai.evaluation.name") or "evaluation")).strip("_")
    label = attributes.get("gen_ai.evaluation.score.label", body.get("label"))
    explanation = attributes.get("gen_ai.evaluation.explanation", body.get("explanation"))
    comment = " — ".join(str(part) for part in (label, explanation) if part not in (None, ""))
    return {"score_id": f"eval_{key}", "session_id": session_id, "name": (name or "evaluation")[:_MAX_NAME],
            "value": float(value), "comment": comment[:_MAX_COMMENT] or None,
            "created_at": ns_to_iso(record.time_ns)}

