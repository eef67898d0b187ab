"""Configuration as code (`POST /apply`, `GET /config`), as declared models: the document of
alert rules, webhooks and SLA targets, and what applying it did.

The objects of a document are the areas' own inputs (AlertRuleInput, SlaTargetInput) and a
webhook entry; validation itself is each area's service, reached through
services/configuration. The file format (YAML, secrets named by environment variable) is
docs/configuration-as-code.md.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.alerts import AlertRuleInput
from obsctl.models.common import Count, ReadOnly, enum_of
from obsctl.models.sla import SlaTargetInput
from obsctl.models.webhooks import Format, RoutingKey, Secret, Url

KINDS = ("alert_rule", "webhook", "sla_target")
ACTIONS = ("create", "update", "unchanged", "delete", "unlisted")


class ConfigWebhook(Struct, forbid_unknown_fields=True, kw_only=True):
    """A webhook of a configuration: named by webhook_id when given (a new webhook gets it),
    else by its whole URL. Left out: secret and routing_key keep their values"""

    webhook_id: Annotated[str, Meta(pattern="^wh_[A-Za-z0-9_-]{1,64}$")] | UnsetType = UNSET
    url: Annotated[Url, Meta(description="The whole URL, or, with the webhook_id it was exported "
                                         "with, its masked form (***): the URL it has")] | UnsetType = UNSET
    format: Format = "generic"
    secret: Annotated[Secret, Meta(description="Left out: kept; null: none. 'generate' is refused "
                                               "(a new secret on every apply)")] | UnsetType = UNSET
    routing_key: RoutingKey | UnsetType = UNSET
    rules: Annotated[list[str] | None, Meta(
        description="Names of the alert rules whose alerts are sent; empty or left out = every rule")] = None
    enabled: bool = True
    has_secret: ReadOnly = UNSET
    has_routing_key: ReadOnly = UNSET
    allow_private: ReadOnly = UNSET
    created_at: ReadOnly = UNSET
    updated_at: ReadOnly = UNSET


class ConfigDocument(Struct, forbid_unknown_fields=True, kw_only=True):
    """Alert rules, webhooks and SLA targets. A section left out is not managed; a section
    present lists every object of its kind (with prune, the others are deleted)"""

    version: Literal[1] | UnsetType = UNSET
    alerts: Annotated[list[AlertRuleInput] | None, Meta(description="Rules, named by name")] | UnsetType = UNSET
    webhooks: list[ConfigWebhook] | None | UnsetType = UNSET
    sla: Annotated[list[SlaTargetInput] | None, Meta(
        description="SLA targets, named by agent_name and metric")] | UnsetType = UNSET


class ConfigExport(Struct, kw_only=True):
    """The stored configuration, as POST /apply takes it back unchanged; never a secret"""

    version: Literal[1]
    alerts: list[AlertRuleInput]
    webhooks: list[ConfigWebhook]
    sla: list[SlaTargetInput]


class FieldChange(Struct):
    """A changed field; a secret shows as *** (null: none), a URL masked"""

    field: str
    old: Any
    new: Any


class ConfigObject(Struct):
    """What applying does to one rule, webhook or target"""

    kind: Annotated[str, enum_of(KINDS)]
    name: Annotated[str, Meta(description="Rule name, masked webhook URL, or 'agent metric'")]
    id: Annotated[str | None, Meta(description="rule_id or webhook_id when there is one")]
    path: Annotated[str | None, Meta(description="Its place in the document (alerts[0]); null when "
                                                 "it is not in it")]
    action: Annotated[str, enum_of(ACTIONS), Meta(
        description="unlisted: stored, not in the document, kept (without prune)")]
    changes: list[FieldChange]


class ApplyResult(Struct):
    dry_run: bool
    prune: bool
    changed: Annotated[bool, Meta(description="Whether anything was (dry run: would be) created, "
                                              "updated or deleted")]
    created: Count
    updated: Count
    unchanged: Count
    deleted: Count
    unlisted: Count
    objects: list[ConfigObject]
