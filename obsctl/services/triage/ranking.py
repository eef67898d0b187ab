"""The order of a report's findings and its severity: anomalies that another finding
explains are folded into it, causes come first, then the most severe."""

from __future__ import annotations

from obsctl.services.triage.facts import SessionAnalysis
from obsctl.services.triage.findings import CATEGORIES, RULES, SEVERITY_RANK

# Which finding explains an anomaly or drift of each baseline metric, in order of preference:
# the anomaly is folded into the first of these the session has, instead of standing alone.
EXPLAINED_BY = {
    "error_count": ("errors",),
    "event_count": ("loop",),
    "duration_ms": ("latency", "loop"),
    "total_tokens": ("loop",),
    "cost_usd": ("cost", "change"),
}


def _host(findings: list[dict], metric: str) -> dict | None:
    for category in EXPLAINED_BY[metric]:
        for f in findings:
            if f["category"] != category:
                continue
            if category == "cost" and "cost_usd" not in f["evidence"]:
                continue  # only the session's cost finding, not unpriced models or waste
            if category == "change" and f["evidence"]["metrics"].get("cost_per_session_usd") != "regression":
                continue
            return f
    return None


def fold_anomalies(findings: list[dict]) -> list[dict]:
    """Anomaly and drift findings whose metric another finding explains (more errors than
    usual by the errors finding, a longer run by slow steps or a loop, ...) become part of that
    finding: its detail says so, its evidence lists them under `explains`, and it takes the
    more severe of the two severities."""
    kept = []
    for f in findings:
        host = _host(findings, f["evidence"]["metric"]) if f["category"] in ("anomaly", "drift") else None
        if host is None:
            kept.append(f)
            continue
        host["detail"] += f" It also explains this: {f['title']}."
        host["evidence"].setdefault("explains", []).append(f["evidence"])
        if SEVERITY_RANK[f["severity"]] > SEVERITY_RANK[host["severity"]]:
            host["severity"] = f["severity"]
    return kept


def all_findings(a: SessionAnalysis) -> list[dict]:
    """Every finding, causes first: the failure's cause (a loop the agent gave up on), then an
    unacknowledged regression of the agent's configuration; then most severe first, then by
    category, then in rule order. Anomalies another finding explains are folded into it."""
    findings = fold_anomalies([f for rule in RULES for f in rule(a)])
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return sorted(findings, key=lambda f: (not f["evidence"].get("caused_failure"),
                                           f["category"] != "change",
                                           -SEVERITY_RANK[f["severity"]], order[f["category"]]))


def worst_severity(findings: list[dict]) -> str:
    """The most severe finding's severity, or `healthy` when there is none."""
    if not findings:
        return "healthy"
    return max((f["severity"] for f in findings), key=SEVERITY_RANK.__getitem__)

