"""SLA targets, checks, history and summary (`/sla`), as declared models, and the limits of a
target's fields.

Validation itself is services/sla (one message per problem, the CLI's and the API's alike); it
reads its limits from here, and these declarations state the same limits for the OpenAPI
document.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.common import NOT_BLANK, Count, Percent, ReadOnly, Timestamp, enum_of, within
from obsctl.models.reads import NoParameters, Read
from obsctl.params import IntParam
from obsctl.vocabulary import METRICS, SCORE_METRIC_PATTERN, operator_spellings

OPERATORS = ("<=", ">=")
WINDOW_HOURS = IntParam("window_hours", 1, 8760, default=24)
MAX_AGENT_LEN = 256
STATUSES = ("pass", "fail", "no_data")

# One of the seven metrics, or avg_score:NAME (a score's name).
Metric = Annotated[str, Meta(extra_json_schema={"anyOf": [{"enum": list(METRICS)},
                                                          {"pattern": SCORE_METRIC_PATTERN}]})]
Operator = Annotated[str, enum_of(OPERATORS)]
AgentName = Annotated[str, Meta(min_length=1, max_length=MAX_AGENT_LEN, pattern=NOT_BLANK,
                                description="Not blank")]


class SlaTargetInput(Struct, forbid_unknown_fields=True, kw_only=True):
    """The SLA target of (agent_name, metric), created or replaced. The read-only fields of a
    target are accepted and ignored"""

    agent_name: AgentName
    metric: Metric
    target_value: float
    operator: Annotated[str, enum_of(operator_spellings(OPERATORS)), Meta(
        description="Stored as the symbol; the words are accepted too (le, lte: <=; ge, gte: >=)")]
    window_hours: Annotated[Annotated[int, within(WINDOW_HOURS)] | None, Meta(
        description="Default 24 on create; kept on update when omitted",
        extra_json_schema={"default": WINDOW_HOURS.default})] | UnsetType = UNSET
    created_at: ReadOnly = UNSET
    updated_at: ReadOnly = UNSET


class SlaTargetKey(Struct):
    """Names one target"""

    agent_name: AgentName
    metric: Metric


class SlaTarget(Struct):
    agent_name: str
    metric: Metric
    operator: Operator
    target_value: float
    window_hours: int
    created_at: Timestamp
    updated_at: Timestamp


class SlaTargetList(Struct):
    targets: list[SlaTarget]
    total: Count


class SlaTargetDeleted(Struct):
    deleted: Literal[True]
    agent_name: str
    metric: str


class SlaResult(Struct):
    """One target's check"""

    agent_name: str
    metric: Metric
    operator: Operator
    target_value: float
    actual_value: float | None
    status: Annotated[str, enum_of(STATUSES)]


class SlaSnapshot(SlaResult):
    """A recorded check"""

    checked_at: Timestamp


class SlaHistory(Struct):
    snapshots: list[SlaSnapshot]
    total: Count


class SlaCheck(Struct):
    checked_at: Timestamp
    results: list[SlaResult]
    passed: Count
    failed: Count
    no_data: Count


class SlaOffender(SlaSnapshot):
    """A failing target's latest check"""

    miss_percent: Annotated[float | None, Meta(
        description="How far the target is missed, in percent of the target value (null for a "
                    "zero target)")]


class SlaAtRisk(SlaSnapshot):
    """A passing target's latest check, close to its target"""

    margin_percent: Annotated[float | None, Meta(
        description="Distance to the target, in percent of the target value (null for a zero "
                    "target)")]


class SlaAgentSummary(Struct):
    agent_name: str
    targets: Count
    passed: Count
    failed: Count
    no_data: Count
    unchecked: Count
    pass_rate: Percent | None


class SlaSummary(Struct):
    overall_pass_rate: Percent | None
    targets: Count
    passed: Count
    failed: Count
    no_data: Count
    unchecked: Count
    last_checked_at: Timestamp | None
    agents: list[SlaAgentSummary]
    worst_offenders: list[SlaOffender]
    at_risk: list[SlaAtRisk]


SLA_TARGETS = Read("/sla/targets", "obsctl.services.sla:list_targets", NoParameters, SlaTargetList,
                   summary="All SLA targets, by agent then metric", tag="sla", errors=())
SLA_SUMMARY = Read("/sla/summary", "obsctl.services.sla.summary:sla_summary", NoParameters, SlaSummary,
                   summary="Pass rates, worst offenders and targets at risk, from each target's latest check",
                   tag="sla", errors=())
