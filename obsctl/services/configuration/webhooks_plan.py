"""Planning a configuration document's webhooks: which stored webhook each entry names (by
`webhook_id`, else by its whole URL), what would change, and the alert rules it names."""

from __future__ import annotations

from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value, loads_column
from obsctl.services import webhooks as webhook_service
from obsctl.services.configuration.document import (
    ENV_FIELDS,
    MASK,
    SECRET_FIELDS,
    WEBHOOK_FIELDS,
    WEBHOOK_ID,
    WEBHOOK_READ_ONLY,
    Problems,
    change,
    is_object,
    plan_item,
)
from obsctl.store import Store


def shown_secret(value: Any) -> str | None:
    return None if value is None else MASK


def urls_to_check(entries: list) -> list[str]:
    """The webhook URLs a document may set: every whole (unmasked) URL it gives."""
    return [e["url"] for e in entries if type(e) is dict and type(e.get("url")) is str and MASK not in e["url"]]


def plan_webhooks(store: Store, settings, entries: list, problems: Problems,
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
        if not is_object(problems, path, entry):
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
        current, id_ = find_webhook(entry, path, stored, by_url, problems)
        if id_ is None:
            continue
        if id_ in listed:
            problems.add(path, f"{listed[id_]} is the same webhook")
            continue
        listed[id_] = path
        rules = rule_list(entry.get("rules"), f"{path}.rules", rule_names, problems)
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
        name = webhook_service.mask_url(url or "")
        if current is None:
            create = {**body, "rule_ids": rules}
            plan.append({**plan_item("webhook", name, "create", path=path, id_=id_ if "webhook_id" in entry else None),
                         "_body": create, "_id": id_ if "webhook_id" in entry else None})
            continue
        old_rules = [names_of.get(r, r) for r in loads_column(current["rule_ids"]) or []]
        changes = []
        if url != current["url"]:
            changes.append(change("url", webhook_service.mask_url(current["url"]), name))
        if fields["format"] != current["format"]:
            changes.append(change("format", current["format"], fields["format"]))
        if bool(fields["enabled"]) != bool(current["enabled"]):
            changes.append(change("enabled", bool(current["enabled"]), bool(fields["enabled"])))
        for secret in SECRET_FIELDS:
            if secret in fields and fields[secret] != current[secret]:
                changes.append(change(secret, shown_secret(current[secret]), shown_secret(fields[secret])))
        if rules != old_rules:
            changes.append(change("rules", old_rules, rules))
        update = {c["field"]: body[c["field"]] for c in changes if c["field"] != "rules"}
        if any(c["field"] == "rules" for c in changes):
            update["rule_ids"] = rules
        plan.append({**plan_item("webhook", name, "update" if changes else "unchanged", path=path, id_=id_,
                             changes=changes), "_body": update, "_id": id_})
    unlisted = {i: row for i, row in stored.items() if i not in listed}
    return plan, unlisted


def find_webhook(entry: dict, path: str, stored: dict, by_url: dict,
                  problems: Problems) -> tuple[dict | None, str | None]:
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
            problems.add(f"{path}.url", MASKED)
            return None, None
        return current, id_
    if masked:
        problems.add(f"{path}.url", MASKED)
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


MASKED = ("a masked URL (with ***) only stands for the URL of the stored webhook it was exported "
           "from, with that webhook_id; give the whole URL (url_env reads it from the environment)")


def rule_list(value: Any, path: str, rule_names: set[str], problems: Problems) -> list[str] | None:
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
