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

import re
from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value, loads_column
from obsctl.services import sla as sla_service
from obsctl.services import webhooks as webhook_service
from obsctl.services.alerts import rules as rule_service
from obsctl.services.sla import WINDOW_HOURS
from obsctl.store import Store

VERSION = 1
SECTIONS = ("alerts", "webhooks", "sla")
KINDS = {"alerts": "alert_rule", "webhooks": "webhook", "sla": "sla_target"}
ACTIONS = ("create", "update", "unchanged", "delete", "unlisted")
# What a webhook entry may say: its fields, and the read-only ones an export adds.
WEBHOOK_FIELDS = ("webhook_id", "url", "format", "secret", "routing_key", "rules", "enabled")
WEBHOOK_READ_ONLY = ("has_secret", "has_routing_key", "allow_private", "created_at", "updated_at")
WEBHOOK_ID = re.compile(r"wh_[A-Za-z0-9_-]{1,64}")
SECRET_FIELDS = ("secret", "routing_key")
ENV_FIELDS = ("url_env", "secret_env", "routing_key_env")
MASK = webhook_service.MASK
_RULE_FIELDS = rule_service.WRITABLE
_SLA_FIELDS = ("operator", "target_value", "window_hours")


class _Problems:
    """The problems found in a document, each at its path."""

    def __init__(self):
        self.items: list[dict] = []

    def add(self, path: str, message: str) -> None:
        self.items.append({"field": path, "message": message})

    def add_error(self, path: str, exc: InvalidInput, fields: tuple[str, ...]) -> None:
        """An area's validation error, placed at the field it names."""
        self.add(*_place(path, exc.message, fields))

    def raise_any(self) -> None:
        if not self.items:
            return
        first = f"{self.items[0]['field']}: {self.items[0]['message']}"
        count = len(self.items)
        message = first if count == 1 else f"{count} problems in the configuration; the first: {first}"
        raise InvalidInput(message, self.items)


def _place(path: str, message: str, fields: tuple[str, ...]) -> tuple[str, str]:
    unknown = re.match(r"unknown [a-zA-Z ]*field '([^']*)'", message)
    if unknown:
        return f"{path}.{unknown.group(1)}", message
    for field in fields:
        for sep in (" ", ": "):
            if message.startswith(field + sep):
                return f"{path}.{field}", message[len(field) + len(sep):]
    return path, message


def _sections(document: Any, problems: _Problems) -> dict[str, list]:
    """The sections the document has, each a list (an empty section may be null)."""
    if type(document) is not dict:
        problems.add("(document)", "must be an object with the sections alerts, webhooks and sla")
        problems.raise_any()
    for key in document:
        if key != "version" and key not in SECTIONS:
            problems.add(str(key), f"unknown section; a configuration has version, {', '.join(SECTIONS)}")
    if "version" in document and (type(document["version"]) is not int or document["version"] != VERSION):
        problems.add("version", f"must be {VERSION}; got {describe_value(document['version'])}")
    sections = {}
    for name in SECTIONS:
        if name not in document:
            continue
        items = document[name]
        if items is None:
            items = []
        if type(items) is not list:
            problems.add(name, f"must be a list; got {describe_value(items)}")
            continue
        sections[name] = items
    problems.raise_any()
    return sections


def _object(problems: _Problems, path: str, entry: Any) -> bool:
    if type(entry) is not dict:
        problems.add(path, f"must be an object; got {describe_value(entry)}")
        return False
    return True


def _change(field: str, old: Any, new: Any) -> dict:
    return {"field": field, "old": old, "new": new}


def _item(kind: str, name: str, action: str, *, path: str | None, id_: str | None = None,
          changes: list[dict] | None = None) -> dict:
    return {"kind": kind, "name": name, "id": id_, "path": path, "action": action,
            "changes": changes or []}


# Alert rules ----------------------------------------------------------------------------------

def _plan_rules(store: Store, entries: list, problems: _Problems) -> tuple[list[dict], dict]:
    """(plan items, the stored rules not listed, by id)."""
    stored: dict[str, list[dict]] = {}
    for row in store.alerts.list_rules():
        stored.setdefault(row["name"], []).append(row)
    listed: dict[str, str] = {}
    plan = []
    for index, entry in enumerate(entries):
        path = f"alerts[{index}]"
        if not _object(problems, path, entry):
            continue
        try:
            fields = rule_service.check_rule_fields(entry)
        except InvalidInput as exc:
            problems.add_error(path, exc, _RULE_FIELDS)
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
            plan.append({**_item("alert_rule", name, "create", path=path), "_body": _rule_body(view)})
            continue
        current = rule_service.rule_view(rows[0])
        changes = [_change(f, current[f], view[f]) for f in _RULE_FIELDS if current[f] != view[f]]
        plan.append({**_item("alert_rule", name, "update" if changes else "unchanged", path=path,
                             id_=current["rule_id"], changes=changes),
                     "_body": {c["field"]: c["new"] for c in changes}})
    unlisted = {r["rule_id"]: r for name, rows in stored.items() if name not in listed for r in rows}
    return plan, unlisted


def _rule_body(view: dict) -> dict:
    return {f: view[f] for f in _RULE_FIELDS}


# SLA targets ----------------------------------------------------------------------------------

def _plan_targets(store: Store, entries: list, problems: _Problems) -> tuple[list[dict], dict]:
    stored = {(t["agent_name"], t["metric"]): t for t in store.sla.list_targets()}
    listed: dict[tuple, str] = {}
    plan = []
    for index, entry in enumerate(entries):
        path = f"sla[{index}]"
        if not _object(problems, path, entry):
            continue
        try:
            fields = sla_service.check_target_fields(entry)
        except InvalidInput as exc:
            problems.add_error(path, exc, ("agent_name", "metric", *_SLA_FIELDS))
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
            plan.append({**_item("sla_target", name, "create", path=path), "_body": fields})
            continue
        changes = [_change(f, current[f], fields[f]) for f in _SLA_FIELDS if current[f] != fields[f]]
        plan.append({**_item("sla_target", name, "update" if changes else "unchanged", path=path,
                             changes=changes), "_body": fields})
    unlisted = {key: t for key, t in stored.items() if key not in listed}
    return plan, unlisted


# Webhooks -------------------------------------------------------------------------------------

def _shown_secret(value: Any) -> str | None:
    return None if value is None else MASK


def _urls_to_check(entries: list) -> list[str]:
    """The webhook URLs a document may set: every whole (unmasked) URL it gives."""
    return [e["url"] for e in entries if type(e) is dict and type(e.get("url")) is str and MASK not in e["url"]]


def _plan_webhooks(store: Store, settings, entries: list, problems: _Problems,
                   rule_names: set[str], checked: webhook_service.UrlChecks) -> tuple[list[dict], dict]:
    """Plan the webhook entries; `rule_names` are the rules there will be once applied;
    `checked` the URL checks made before the transaction."""
    stored = {row["webhook_id"]: row for row in store.webhooks.list_webhooks()}
    by_url: dict[str, list[dict]] = {}
    for row in stored.values():
        by_url.setdefault(row["url"], []).append(row)
    names_of = {r["rule_id"]: r["name"] for r in store.alerts.list_rules()}
    listed: dict[str, str] = {}
    plan = []
    for index, entry in enumerate(entries):
        path = f"webhooks[{index}]"
        if not _object(problems, path, entry):
            continue
        found = len(problems.items)
        for key in entry:
            if key in ENV_FIELDS:
                problems.add(f"{path}.{key}", f"environment variables are read by the client (obsctl "
                                              f"apply reads them from its environment); send the value "
                                              f"as {key.removesuffix('_env')}")
            elif key not in WEBHOOK_FIELDS and key not in WEBHOOK_READ_ONLY:
                problems.add(f"{path}.{key}", f"unknown webhook field; fields are {', '.join(WEBHOOK_FIELDS)}")
        if entry.get("secret") == "generate":
            problems.add(f"{path}.secret", "'generate' would make a new secret on every apply; make "
                                           "one once and name its environment variable with secret_env")
        if len(problems.items) > found:
            continue
        current, id_ = _find_webhook(entry, path, stored, by_url, problems)
        if id_ is None:
            continue
        if id_ in listed:
            problems.add(path, f"{listed[id_]} is the same webhook")
            continue
        listed[id_] = path
        rules = _rule_list(entry.get("rules"), f"{path}.rules", rule_names, problems)
        if rules is None:
            continue
        body = {"format": entry.get("format", "generic"), "enabled": entry.get("enabled", True)}
        if "url" in entry:
            body["url"] = entry["url"]
        for name in SECRET_FIELDS:
            if name in entry:
                body[name] = entry[name]
        if body["format"] != "pagerduty" and "routing_key" not in entry:
            body["routing_key"] = None  # only PagerDuty webhooks have one
        try:
            fields = webhook_service.check_webhook_fields(store, settings, body, current, checked=checked)
        except InvalidInput as exc:
            problems.add_error(path, exc, WEBHOOK_FIELDS)
            continue
        url = fields.get("url", current["url"] if current else None)
        name = webhook_service.mask_url(url)
        if current is None:
            create = {**body, "rule_ids": rules}
            plan.append({**_item("webhook", name, "create", path=path, id_=id_ if "webhook_id" in entry else None),
                         "_body": create, "_id": id_ if "webhook_id" in entry else None})
            continue
        old_rules = [names_of.get(r, r) for r in loads_column(current["rule_ids"]) or []]
        changes = []
        if url != current["url"]:
            changes.append(_change("url", webhook_service.mask_url(current["url"]), name))
        if fields["format"] != current["format"]:
            changes.append(_change("format", current["format"], fields["format"]))
        if bool(fields["enabled"]) != bool(current["enabled"]):
            changes.append(_change("enabled", bool(current["enabled"]), bool(fields["enabled"])))
        for secret in SECRET_FIELDS:
            if secret in fields and fields[secret] != current[secret]:
                changes.append(_change(secret, _shown_secret(current[secret]), _shown_secret(fields[secret])))
        if rules != old_rules:
            changes.append(_change("rules", old_rules, rules))
        update = {c["field"]: body[c["field"]] for c in changes if c["field"] != "rules"}
        if any(c["field"] == "rules" for c in changes):
            update["rule_ids"] = rules
        plan.append({**_item("webhook", name, "update" if changes else "unchanged", path=path, id_=id_,
                             changes=changes), "_body": update, "_id": id_})
    unlisted = {i: row for i, row in stored.items() if i not in listed}
    return plan, unlisted


def _find_webhook(entry: dict, path: str, stored: dict, by_url: dict,
                  problems: _Problems) -> tuple[dict | None, str | None]:
    """(the stored webhook the entry names or None, its id or a key for a new one); id None
    when the entry cannot name one."""
    url = entry.get("url")
    masked = type(url) is str and MASK in url
    if "webhook_id" in entry:
        id_ = entry["webhook_id"]
        if type(id_) is not str or not WEBHOOK_ID.fullmatch(id_):
            problems.add(f"{path}.webhook_id", f"must be wh_ then 1 to 64 letters, digits, _ or -; "
                                               f"got {describe_value(id_)}")
            return None, None
        current = stored.get(id_)
        if masked and (current is None or webhook_service.mask_url(current["url"]) != url):
            problems.add(f"{path}.url", _MASKED)
            return None, None
        return current, id_
    if masked:
        problems.add(f"{path}.url", _MASKED)
        return None, None
    if "url" not in entry:
        problems.add(path, "a webhook needs its url (or url_env) and may have a webhook_id")
        return None, None
    rows = by_url.get(url, []) if type(url) is str else []
    if len(rows) > 1:
        problems.add(f"{path}.url", f"{len(rows)} stored webhooks have this URL "
                                    f"({', '.join(r['webhook_id'] for r in rows)}); give the entry "
                                    f"the webhook_id of the one it is")
        return None, None
    if rows:
        return rows[0], rows[0]["webhook_id"]
    return None, f"new:{url}"


_MASKED = ("a masked URL (with ***) only stands for the URL of the stored webhook it was exported "
           "from, with that webhook_id; give the whole URL (url_env reads it from the environment)")


def _rule_list(value: Any, path: str, rule_names: set[str], problems: _Problems) -> list[str] | None:
    if value is None:
        return []
    if type(value) is not list or any(type(v) is not str for v in value):
        problems.add(path, "must be a list of alert rule names (empty or left out: every rule)")
        return None
    missing = [(i, v) for i, v in enumerate(value) if v not in rule_names]
    for i, name in missing:
        problems.add(f"{path}[{i}]", f"no alert rule named {name!r} (in the file or, without "
                                     f"prune, stored)")
    return None if missing else list(dict.fromkeys(value))


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
    problems = _Problems()
    sections = _sections(document, problems)
    # DNS before the transaction: a lookup may take seconds, and the write lock is shared.
    checked = webhook_service.check_urls(settings, _urls_to_check(sections.get("webhooks", [])))
    unit = store.read_snapshot() if dry_run else store.transaction()
    with unit:
        rules, webhooks, targets = [], [], []
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
            webhooks, unlisted_hooks = _plan_webhooks(store, settings, sections["webhooks"], problems, names,
                                                      checked)
        if "sla" in sections:
            targets, unlisted_targets = _plan_targets(store, sections["sla"], problems)
        problems.raise_any()
        gone = "delete" if prune else "unlisted"
        rules += [_item("alert_rule", r["name"], gone, path=None, id_=i) for i, r in unlisted_rules.items()]
        webhooks += [_item("webhook", webhook_service.mask_url(r["url"]), gone, path=None, id_=i)
                     for i, r in unlisted_hooks.items()]
        targets += [{**_item("sla_target", f"{a} {m}", gone, path=None), "_key": (a, m)}
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
