"""Alert rules, alert events and evaluations (`/alerts`), as declared models, and the limits of
a rule's fields.

Validation itself is services/alerts/rules.py (one message per problem, the CLI's and the
API's alike); it reads its limits from here, and these declarations state the same limits for
the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.common import NOT_BLANK, Count, ReadOnly, Timestamp, enum_of, within
from obsctl.models.reads import NoParameters, PathParam, Read
from obsctl.params import IntParam
from obsctl.vocabulary import METRICS, OPERATORS, SCORE_METRIC_PATTERN, operator_spellings

WINDOW_MINUTES = IntParam("window_minutes", 1, 43200, default=60)
COOLDOWN_MINUTES = IntParam("cooldown_minutes", 0, 525600, default=15)  # a year; longer is a typo
MAX_NAME_LEN = 256
# How urgent a rule's alerts are: PagerDuty's severities, in its order.
SEVERITIES = ("critical", "error", "warning", "info")
DEFAULT_SEVERITY = "warning"
EVALUATION_STATUSES = ("fired", "ok", "cooldown", "no_data", "resolved", "would_fire", "would_resolve")

# One of the seven metrics, or avg_score:NAME (a score's name).
Metric = Annotated[str, Meta(extra_json_schema={"anyOf": [{"enum": list(METRICS)},
                                                          {"pattern": SCORE_METRIC_PATTERN}]})]
Operator = Annotated[str, enum_of(OPERATORS)]
OperatorInput = Annotated[str, enum_of(operator_spellings(OPERATORS)), Meta(
    description="Stored as the symbol; the words lt, gt, le/lte, ge/gte, eq, ne are accepted too")]
RuleName = Annotated[str, Meta(min_length=1, max_length=MAX_NAME_LEN, pattern=NOT_BLANK)]
AgentFilter = Annotated[Annotated[str, Meta(max_length=MAX_NAME_LEN)] | None, Meta(
    description="Only this agent's sessions; null or empty = all agents")]
Severity = Annotated[str, enum_of(SEVERITIES), Meta(
    description="How urgent the rule's alerts are; PagerDuty's payload.severity")]
Window = Annotated[int, within(WINDOW_MINUTES)]
Cooldown = Annotated[int, within(COOLDOWN_MINUTES)]


class AlertRuleInput(Struct, forbid_unknown_fields=True, kw_only=True):
    """A new alert rule. The read-only fields of a rule are accepted and ignored, so a rule read
    from the API can be sent back as it is"""

    name: RuleName
    metric: Metric
    operator: OperatorInput
    threshold: float
    window_minutes: Window = WINDOW_MINUTES.resolve(None)
    cooldown_minutes: Cooldown = COOLDOWN_MINUTES.resolve(None)
    agent_filter: AgentFilter = None
    enabled: bool = True
    severity: Severity = DEFAULT_SEVERITY
    rule_id: ReadOnly = UNSET
    created_at: ReadOnly = UNSET
    updated_at: ReadOnly = UNSET
    last_fired_at: ReadOnly = UNSET


class AlertRuleUpdate(Struct, forbid_unknown_fields=True, kw_only=True):
    """Any subset of the rule fields; the others keep their values"""

    name: RuleName | UnsetType = UNSET
    metric: Metric | UnsetType = UNSET
    operator: OperatorInput | UnsetType = UNSET
    threshold: float | UnsetType = UNSET
    window_minutes: Window | UnsetType = UNSET
    cooldown_minutes: Cooldown | UnsetType = UNSET
    agent_filter: AgentFilter | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET
    severity: Severity | UnsetType = UNSET
    rule_id: ReadOnly = UNSET
    created_at: ReadOnly = UNSET
    updated_at: ReadOnly = UNSET
    last_fired_at: ReadOnly = UNSET


class AlertRule(Struct):
    """A stored alert rule"""

    rule_id: str
    name: RuleName
    metric: Metric
    operator: Operator
    threshold: float
    window_minutes: Window
    cooldown_minutes: Cooldown
    agent_filter: str | None
    enabled: bool
    severity: Severity
    created_at: Timestamp
    updated_at: Timestamp
    last_fired_at: Timestamp | None


class AlertRuleList(Struct):
    rules: list[AlertRule]
    total: Count


class AlertRuleDeleted(Struct):
    deleted: Literal[True]
    rule_id: str


class AlertEvent(Struct):
    """A fired alert: the rule as it was when it fired, and the value that fired it"""

    alert_id: str
    rule_id: str
    rule_name: str
    metric: Metric
    operator: Operator
    threshold: float
    value: float | None
    window_minutes: int
    agent_filter: str | None
    fired_at: Timestamp
    acknowledged: bool
    acknowledged_at: Timestamp | None
    resolved_at: Annotated[Timestamp | None, Meta(
        description="When an evaluation found the rule's condition no longer holding; null while firing")]


class AlertEventList(Struct):
    events: list[AlertEvent]
    total: Count


class RuleEvaluation(Struct):
    """One enabled rule's outcome"""

    rule_id: str
    name: str
    metric: Metric
    operator: Operator
    threshold: float
    value: float | None
    status: Annotated[str, enum_of(EVALUATION_STATUSES)]
    alert_id: Annotated[str, Meta(
        description="When status is fired: the new alert; resolved: the alert now resolved")] | UnsetType = UNSET


class EvaluationResult(Struct):
    evaluated_at: Timestamp
    evaluated: Count
    fired: Count
    results: list[RuleEvaluation]
    dry_run: Annotated[bool, Meta(description="Present (true) for a dry run: nothing was recorded or sent")
                       ] | UnsetType = UNSET
    would_fire: Annotated[int, Meta(ge=0, description="Dry run: rules that would have fired")] | UnsetType = UNSET


class AlertMetric(Struct):
    name: Metric
    description: str


class AlertMetricList(Struct):
    metrics: list[AlertMetric]
    total: Count


EVENTS_LIMIT = IntParam("limit", 1, 500, default=50, capped=True)


class AlertEventsQuery(Struct, kw_only=True):
    limit: Annotated[int, within(EVENTS_LIMIT, description="Alerts to return")] | None = None
    unacknowledged: Annotated[bool, Meta(description="true = only alerts not yet acknowledged")] = False
    rule_id: Annotated[str, Meta(description="Only this rule's alerts")] | None = None


ALERT_EVENTS = Read("/alerts/events", "obsctl.services.alerts:list_alert_events", AlertEventsQuery,
                    AlertEventList, summary="Fired alerts, newest first", tag="alerts")
ALERT_RULES = Read("/alerts/rules", "obsctl.services.alerts.rules:list_rules", NoParameters, AlertRuleList,
                   summary="All alert rules, enabled or not, in creation order", tag="alerts", errors=())
ALERT_RULE = Read("/alerts/rules/{rule_id}", "obsctl.services.alerts.rules:get_rule", NoParameters, AlertRule,
                  summary="One alert rule", tag="alerts", errors=(404,),
                  path_params=(PathParam("rule_id", "Alert rule id", "alert rule {!r} not found", converter="string"),))
