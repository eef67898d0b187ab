"""Configuration as code: alert rules, webhooks and SLA targets as one document, applied and
exported (docs/configuration-as-code.md).

A document is `{"version": 1, "alerts": [...], "webhooks": [...], "sla": [...]}`. Each object
is validated by its own area's checks (services/alerts/rules.py, services/webhooks,
services/sla), the same as `obsctl alerts rules add` or `POST /alerts/rules`; a problem is
reported with its place in the document (`alerts[2].threshold: must be a finite number;
got 'high'`), every problem at once.

Identity: a rule is its `name`, an SLA target its (`agent_name`, `metric`), a webhook its
`webhook_id` when the entry has one (a new webhook then gets that id), else its whole URL.
A section the document leaves out is not managed; a section present lists every object of its
kind, so with `prune` what it no longer lists is deleted.

Secrets are values in the document (the client read them from the environment variables the
file names, services/configuration/file.py); a webhook entry without `secret` or
`routing_key` keeps the one it has. Nothing secret is returned: the result shows a secret as
`***` and URLs masked.

Applying is one transaction: every change or none. A dry run plans the same changes and
makes none. Webhook URLs are checked (DNS) before that transaction opens, all at once, so
slow names never hold the write lock.
"""

from __future__ import annotations

from typing import Any

from obsctl.errors import InvalidInput
from obsctl.services import sla as sla_service
from obsctl.services import webhooks as webhook_service
from obsctl.services.alerts import rules as rule_service
from obsctl.services.configuration.document import (
    ACTIONS,
    RULE_FIELDS,
    SLA_FIELDS,
    VERSION,
    Problems,
    change,
    is_object,
    plan_item,
    read_sections,
)
from obsctl.services.configuration.webhooks_plan import plan_webhooks, urls_to_check
from obsctl.services.sla import WINDOW_HOURS
from obsctl.store import Store

# Alert rules ----------------------------------------------------------------------------------

def _plan_rules(store: Store, entries: list, problems: Problems) -> tuple[list[dict], dict]:
    """(plan items, the stored rules not listed, by id)."""
    stored: dict[str, list[dict]] = {}
    for row in store.alerts.list_rules():
        stored.setdefault(row["name"], []).append(row)
    listed: dict[str, str] = {}
    plan = []
    for index, entry in enumerate(entries):
        path = f"alerts[{index}]"
        if not is_object(problems, path, entry):
            continue
        try:
            fields = rule_service.check_rule_fields(entry)
        except InvalidInput as exc:
            problems.add_error(path, exc, RULE_FIELDS)
            continue
        name = fields["name"]
        if name in listed:
            problems.add(f"{path}.name", f"{listed[name]} has the same name; a rule's name is what "
                                         f"identifies it in a configuration")
            continue
        listed[name] = path
        rows = stored.get(name, [])
        if len(rows) > 1:
            problems.add(f"{path}.name", f"{len(rows)} stored alert rules are named {name!r} "
                                         f"({', '.join(r['rule_id'] for r in rows)}); rename or delete "
                                         f"all but one first (obsctl alerts rules update/delete)")
            continue
        view = rule_service.rule_view({**fields, "rule_id": None, "created_at": None,
                                       "updated_at": None, "last_fired_at": None})
        if not rows:
            plan.append({**plan_item("alert_rule", name, "create", path=path), "_body": _rule_body(view)})
            continue
        current = rule_service.rule_view(rows[0])
        changes = [change(f, current[f], view[f]) for f in RULE_FIELDS if current[f] != view[f]]
        plan.append({**plan_item("alert_rule", name, "update" if changes else "unchanged", path=path,
                             id_=current["rule_id"], changes=changes),
                     "_body": {c["field"]: c["new"] for c in changes}})
    unlisted = {r["rule_id"]: r for name, rows in stored.items() if name not in listed for r in rows}
    return plan, unlisted


def _rule_body(view: dict) -> dict:
    return {f: view[f] for f in RULE_FIELDS}


# SLA targets ----------------------------------------------------------------------------------

def _plan_targets(store: Store, entries: list, problems: Problems) -> tuple[list[dict], dict]:
    stored = {(t["agent_name"], t["metric"]): t for t in store.sla.list_targets()}
    listed: dict[tuple, str] = {}
    plan = []
    for index, entry in enumerate(entries):
        path = f"sla[{index}]"
        if not is_object(problems, path, entry):
            continue
        try:
            fields = sla_service.check_target_fields(entry)
        except InvalidInput as exc:
            problems.add_error(path, exc, ("agent_name", "metric", *SLA_FIELDS))
            continue
        fields.setdefault("window_hours", WINDOW_HOURS.default)
        key = (fields["agent_name"], fields["metric"])
        if key in listed:
            problems.add(path, f"{listed[key]} is the same target (agent_name and metric identify "
                               f"a target)")
            continue
        listed[key] = path
        name = f"{key[0]} {key[1]}"
        current = stored.get(key)
        if current is None:
            plan.append({**plan_item("sla_target", name, "create", path=path), "_body": fields})
            continue
        changes = [change(f, current[f], fields[f]) for f in SLA_FIELDS if current[f] != fields[f]]
        plan.append({**plan_item("sla_target", name, "update" if changes else "unchanged", path=path,
                             changes=changes), "_body": fields})
    unlisted = {key: t for key, t in stored.items() if key not in listed}
    return plan, unlisted


# Applying -------------------------------------------------------------------------------------

def apply_config(store: Store, settings, document: Any, *, dry_run: bool = False,
                 prune: bool = False) -> dict:
    """Make the stored alert rules, webhooks and SLA targets what `document` says, in one
    transaction (or, with `dry_run`, say what that would change and change nothing).

    Returns `{"dry_run", "prune", "changed", "created", "updated", "unchanged", "deleted",
    "unlisted", "objects": [...]}`: one object per rule, webhook and target (create, update
    with the changed fields, unchanged, delete, or unlisted: stored, not in the file, kept
    without prune), in the order rules, webhooks, targets.
    """
    problems = Problems()
    sections = read_sections(document, problems)
    # DNS before the transaction: a lookup may take seconds, and the write lock is shared.
    checked = webhook_service.check_urls(settings, urls_to_check(sections.get("webhooks", [])))
    unit = store.read_snapshot() if dry_run else store.transaction()
    with unit:
        rules: list[dict] = []
        webhooks: list[dict] = []
        targets: list[dict] = []
        unlisted_rules: dict = {}
        unlisted_hooks: dict = {}
        unlisted_targets: dict = {}
        if "alerts" in sections:
            rules, unlisted_rules = _plan_rules(store, sections["alerts"], problems)
            # A rule with a problem of its own still has its name: no second problem for it.
            named = {e["name"] for e in sections["alerts"] if type(e) is dict and type(e.get("name")) is str}
            names = named | (set() if prune else {r["name"] for r in unlisted_rules.values()})
        else:
            names = {r["name"] for r in store.alerts.list_rules()}
        if "webhooks" in sections:
            webhooks, unlisted_hooks = plan_webhooks(store, settings, sections["webhooks"], problems, names,
                                                      checked)
        if "sla" in sections:
            targets, unlisted_targets = _plan_targets(store, sections["sla"], problems)
        problems.raise_any()
        gone = "delete" if prune else "unlisted"
        rules += [plan_item("alert_rule", r["name"], gone, path=None, id_=i) for i, r in unlisted_rules.items()]
        webhooks += [plan_item("webhook", webhook_service.mask_url(r["url"]), gone, path=None, id_=i)
                     for i, r in unlisted_hooks.items()]
        targets += [{**plan_item("sla_target", f"{a} {m}", gone, path=None), "_key": (a, m)}
                    for (a, m) in unlisted_targets]
        if not dry_run:
            _execute(store, settings, rules, webhooks, targets, checked)
    objects = [{k: v for k, v in item.items() if not k.startswith("_")} for item in rules + webhooks + targets]
    counts = {action: sum(1 for o in objects if o["action"] == action) for action in ACTIONS}
    return {"dry_run": dry_run, "prune": prune,
            "changed": any(counts[a] for a in ("create", "update", "delete")),
            "created": counts["create"], "updated": counts["update"], "unchanged": counts["unchanged"],
            "deleted": counts["delete"], "unlisted": counts["unlisted"], "objects": objects}


def _execute(store: Store, settings, rules: list[dict], webhooks: list[dict], targets: list[dict],
             checked: webhook_service.UrlChecks) -> None:
    """Carry out a plan inside the caller's transaction, through each area's own use cases
    (webhooks with the URL checks made before it)."""
    ids = {r["name"]: r["rule_id"] for r in store.alerts.list_rules()}
    for item in rules:
        if item["action"] == "create":
            item["id"] = rule_service.create_rule(store, item["_body"])["rule_id"]
            ids[item["name"]] = item["id"]
        elif item["action"] == "update":
            rule_service.update_rule(store, item["id"], item["_body"])
    for item in webhooks:
        if item["action"] == "delete":
            webhook_service.delete_webhook(store, item["id"])
    for item in webhooks:
        body = dict(item.get("_body", {}))
        if "rule_ids" in body:
            body["rule_ids"] = [ids[name] for name in body["rule_ids"]]
        if item["action"] == "create":
            if item["_id"]:
                created = webhook_service.insert_webhook(store, settings, body, item["_id"], checked=checked)
            else:
                created = webhook_service.create_webhook(store, settings, body, checked=checked)
            item["id"] = created["webhook_id"]
        elif item["action"] == "update":
            webhook_service.update_webhook(store, settings, item["id"], body, checked=checked)
    for item in rules:
        if item["action"] == "delete":
            rule_service.delete_rule(store, item["id"])
    for item in targets:
        if item["action"] in ("create", "update"):
            sla_service.put_target(store, item["_body"])
        elif item["action"] == "delete":
            sla_service.delete_target(store, *item["_key"])


# Exporting ------------------------------------------------------------------------------------

def export_config(store: Store) -> dict:
    """The stored alert rules, webhooks and SLA targets as a document `apply_config` takes
    back unchanged. Secrets are never in it: a webhook says `has_secret` and
    `has_routing_key`, and a URL that may hold a credential is masked (applied back with its
    webhook_id, a masked URL means "the URL it has")."""
    stored_rules = store.alerts.list_rules()
    names_of = {r["rule_id"]: r["name"] for r in stored_rules}
    alerts = [_rule_body(rule_service.rule_view(r)) for r in stored_rules]
    webhooks = []
    for row in store.webhooks.list_webhooks():
        view = webhook_service.webhook_view(row)
        webhooks.append({
            "webhook_id": view["webhook_id"], "url": view["url"], "format": view["format"],
            "rules": [names_of[r] for r in view["rule_ids"] if r in names_of],
            "enabled": view["enabled"], "has_secret": view["has_secret"],
            "has_routing_key": view["has_routing_key"]})
    sla = [{"agent_name": t["agent_name"], "metric": t["metric"], "operator": t["operator"],
            "target_value": t["target_value"], "window_hours": t["window_hours"]}
           for t in store.sla.list_targets()]
    return {"version": VERSION, "alerts": alerts, "webhooks": webhooks, "sla": sla}
