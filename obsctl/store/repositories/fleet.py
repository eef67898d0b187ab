"""The repositories of what watches the fleet: alerts, webhooks, SLA targets, scorecards and
configuration changes. See the package's docstring."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class AlertsRepository(Protocol):
    """Alert rules and alert events (fired alerts)."""

    def insert_rule(self, rule: dict) -> None:
        """Insert a new rule."""

    def get_rule(self, rule_id: str) -> dict | None:
        """One rule, or None."""

    def list_rules(self, *, enabled_only: bool = False) -> list[dict]:
        """Rules in creation order, only the enabled ones if `enabled_only`."""

    def update_rule(self, rule_id: str, changes: dict) -> bool:
        """Apply `changes` (column -> value); False when the rule does not exist."""

    def delete_rule(self, rule_id: str) -> bool:
        """Delete a rule and its alert events; False when the rule does not exist."""

    def last_fired_at(self, rule_ids: list[str]) -> dict[str, str | None]:
        """Current last_fired_at of some rules (re-read inside the firing transaction)."""

    def record_firing(self, alert: dict) -> None:
        """Insert an alert event and stamp its rule's last_fired_at (inside a transaction)."""

    def list_alerts(self, *, limit: int, unacknowledged: bool,
                    rule_id: str | None) -> tuple[list[dict], int]:
        """Alert events newest first, and how many match the filters."""

    def get_alert(self, alert_id: str) -> dict | None:
        """One alert event, or None."""

    def acknowledge_alert(self, alert_id: str, at: str) -> bool:
        """Mark acknowledged; a second acknowledgement keeps the first timestamp."""

    def unresolved_alerts(self, rule_ids: list[str]) -> list[dict]:
        """The alerts of these rules not yet resolved, oldest first."""

    def resolve_alerts(self, alert_ids: list[str], at: str) -> None:
        """Stamp resolved_at on these alerts (those already resolved keep theirs)."""

class WebhooksRepository(Protocol):
    """Webhooks and their delivery outbox."""

    def insert_webhook(self, webhook: dict) -> None:
        """Insert a new webhook."""

    def get_webhook(self, webhook_id: str) -> dict | None:
        """One webhook, or None."""

    def list_webhooks(self, *, enabled_only: bool = False) -> list[dict]:
        """Webhooks in creation order, only the enabled ones if `enabled_only`."""

    def update_webhook(self, webhook_id: str, changes: dict) -> bool:
        """Apply `changes` (column -> value); False when the webhook does not exist."""

    def delete_webhook(self, webhook_id: str) -> bool:
        """Delete a webhook and its deliveries; False when the webhook does not exist."""

    def disable_webhook(self, webhook_id: str, updated_at: str) -> None:
        """Disable a webhook (deliveries to it stop being attempted)."""

    def insert_deliveries(self, deliveries: Iterable[dict]) -> None:
        """Queue deliveries in the outbox."""

    def expire_pending(self, created_before: str, message: str) -> int:
        """Give up on pending deliveries created before `created_before`."""

    def claim_due(self, now: str, lease_until: str) -> dict | None:
        """Take the next due pending delivery of an enabled webhook (inside a write transaction)."""

    def claim_failed(self, delivery_id: str, lease_until: str) -> dict | None:
        """Take a failed delivery of an enabled webhook back as a pending claim, for a retry now."""

    def get_delivery(self, delivery_id: str) -> dict | None:
        """One delivery (without its payload), or None."""

    def record_attempt(self, delivery_id: str, attempts_before: int, *, status: str,
                       error: str | None, status_code: int | None, next_attempt_at: str,
                       delivered_at: str | None) -> bool:
        """Record the outcome of the attempt claimed with `attempts_before` attempts made."""

    def cancel_pending_for_rule(self, rule_id: str, message: str) -> int:
        """Mark failed, with `message`, the pending deliveries of a rule's alerts."""

    def next_due_at(self) -> str | None:
        """When the earliest pending delivery of an enabled webhook is due (None: none pending)."""

    def list_deliveries(self, *, webhook_id: str | None, status: str | None,
                        alert_id: str | None, limit: int) -> tuple[list[dict], int]:
        """Deliveries newest first (without payloads), and how many match."""

class SlaRepository(Protocol):
    """SLA targets and their compliance snapshots."""

    def get_target(self, agent_name: str, metric: str) -> dict | None:
        """One target, or None."""

    def list_targets(self) -> list[dict]:
        """Every target, by agent then metric."""

    def insert_target(self, target: dict) -> None:
        """Insert a new target."""

    def update_target(self, target: dict) -> None:
        """Update the operator, value and window of the target with the same (agent_name, metric)."""

    def delete_target(self, agent_name: str, metric: str) -> bool:
        """Remove one target (its snapshots stay as history); False when there was none."""

    def insert_snapshots(self, snapshots: Iterable[dict]) -> None:
        """Store check results."""

    def list_snapshots(self, *, since: str, agent_name: str | None,
                       limit: int) -> tuple[list[dict], int]:
        """Snapshots checked at or after `since`, newest check first, and how many match."""

    def latest_snapshots(self) -> list[tuple[str, str, dict | None]]:
        """For every current target: (agent_name, metric, its most recent snapshot or None)."""

class ScorecardsRepository(Protocol):
    """Aggregates behind the scorecards, per agent or, for one agent, per day."""

    def session_totals(self, since: str, until: str, agent: str | None = None) -> dict:
        """{group: (sessions, error_sessions, completed_sessions)}."""

    def event_totals(self, since: str, until: str, agent: str | None) -> dict:
        """Per group: (events, error_events, timed_events, tokens, stored cost or None)."""

    def duration_percentiles(self, since: str, until: str, agent: str | None,
                             counts: dict) -> dict:
        """{group: (p50, p95)}: nearest-rank percentiles of each group's event durations."""

class ChangesRepository(Protocol):
    """The reads behind change detection, and acknowledged changes."""

    def window_sessions(self, agent: str | None, since: str, until: str) -> list[dict]:
        """The sessions started in [since, until), of one agent or all, by agent then start."""

    def window_model_tokens(self, agent: str | None, since: str,
                            until: str) -> list[tuple]:
        """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
        session of the window and model."""

    def llm_durations(self, session_ids: list[str]) -> list[float]:
        """The durations of the successful llm_call events of these sessions, sorted."""

    def acknowledged(self, change_ids: list[str]) -> dict[str, dict]:
        """{change_id: {"acknowledged_at", "note"}} of the acknowledged changes among these."""

    def acknowledge(self, change_id: str, agent: str, changed_at: str, at: str,
                    note: str | None) -> bool:
        """Record an acknowledgement; False when the change already was acknowledged."""
