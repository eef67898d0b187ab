"""A configuration document's shape and its problems: the sections, the fields a webhook entry
may have, and the problems found, each at its place (services/configuration/__init__.py
plans and applies the document)."""

from __future__ import annotations

import re
from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value
from obsctl.services import webhooks as webhook_service
from obsctl.services.alerts import rules as rule_service

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
RULE_FIELDS = rule_service.WRITABLE
SLA_FIELDS = ("operator", "target_value", "window_hours")


class Problems:
    """The problems found in a document, each at its path."""

    def __init__(self):
        self.items: list[dict] = []

    def add(self, path: str, message: str) -> None:
        self.items.append({"field": path, "message": message})

    def add_error(self, path: str, exc: InvalidInput, fields: tuple[str, ...]) -> None:
        """An area's validation error, placed at the field it names."""
        self.add(*place(path, exc.message, fields))

    def raise_any(self) -> None:
        if not self.items:
            return
        first = f"{self.items[0]['field']}: {self.items[0]['message']}"
        count = len(self.items)
        message = first if count == 1 else f"{count} problems in the configuration; the first: {first}"
        raise InvalidInput(message, self.items)


def place(path: str, message: str, fields: tuple[str, ...]) -> tuple[str, str]:
    unknown = re.match(r"unknown [a-zA-Z ]*field '([^']*)'", message)
    if unknown:
        return f"{path}.{unknown.group(1)}", message
    for field in fields:
        for sep in (" ", ": "):
            if message.startswith(field + sep):
                return f"{path}.{field}", message[len(field) + len(sep):]
    return path, message


def read_sections(document: Any, problems: Problems) -> dict[str, list]:
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


def is_object(problems: Problems, path: str, entry: Any) -> bool:
    if type(entry) is not dict:
        problems.add(path, f"must be an object; got {describe_value(entry)}")
        return False
    return True


def change(field: str, old: Any, new: Any) -> dict:
    return {"field": field, "old": old, "new": new}


def plan_item(kind: str, name: str, action: str, *, path: str | None, id_: str | None = None,
          changes: list[dict] | None = None) -> dict:
    return {"kind": kind, "name": name, "id": id_, "path": path, "action": action,
            "changes": changes or []}
