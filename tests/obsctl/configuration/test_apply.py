"""Configuration as code: apply (create, update, unchanged, delete), dry runs, prune, the
round trip through export, secrets from the environment and never shown, problems named by
path, all or nothing; through the service, the CLI and the HTTP API."""

from __future__ import annotations

import base64
import json

import pytest
import yaml

from obsctl.errors import InvalidInput
from obsctl.services import configuration as config
from obsctl.services import sla, webhooks
from obsctl.services.alerts import rules

SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(bytes(range(1, 33))).decode()
SLACK = "https://hooks.slack.com/services/T000/B000/abcdefghijklmnopqrstuvwx"
PD_KEY = "R0UT1NGKEY00000000000000000000ab"

DOCUMENT = {
    "version": 1,
    "alerts": [
        {"name": "errors", "metric": "error_rate", "operator": "gt", "threshold": 10, "window_minutes": 1440},
        {"name": "slow", "metric": "p95_duration_ms", "operator": ">", "threshold": 2500, "severity": "critical"},
    ],
    "webhooks": [
        {"webhook_id": "wh_ops", "url": "https://hooks.example.com/obsctl", "secret": SECRET, "rules": ["slow"]},
        {"url": SLACK, "format": "slack"},
        {"webhook_id": "wh_pager", "url": "https://events.pagerduty.com/v2/enqueue", "format": "pagerduty",
         "routing_key": PD_KEY, "rules": ["errors", "slow"]},
    ],
    "sla": [{"agent_name": "support-bot", "metric": "error_rate", "operator": "le", "target_value": 5}],
}


def _actions(result: dict) -> list[tuple[str, str, str]]:
    return [(o["kind"], o["name"], o["action"]) for o in result["objects"]]


def _stored(store) -> tuple:
    return (rules.list_rules(store), webhooks.list_webhooks(store), sla.list_targets(store))


def test_apply_creates_everything_then_changes_nothing(db, settings):
    first = config.apply_config(db, settings, DOCUMENT)
    assert _actions(first) == [
        ("alert_rule", "errors", "create"), ("alert_rule", "slow", "create"),
        ("webhook", "https://hooks.example.com/obsctl", "create"),
        ("webhook", "https://hooks.slack.com/services/***", "create"),
        ("webhook", "https://events.pagerduty.com/v2/***", "create"),
        ("sla_target", "support-bot error_rate", "create")]
    assert (first["created"], first["changed"]) == (6, True)
    stored_rules = {r["name"]: r for r in rules.list_rules(db)["rules"]}
    assert stored_rules["errors"]["operator"] == ">" and stored_rules["errors"]["window_minutes"] == 1440
    assert stored_rules["slow"]["severity"] == "critical" and stored_rules["slow"]["cooldown_minutes"] == 15
    ops = db.webhooks.get_webhook("wh_ops")
    assert ops["secret"] == SECRET
    assert json.loads(ops["rule_ids"]) == [stored_rules["slow"]["rule_id"]]
    assert db.webhooks.get_webhook("wh_pager")["routing_key"] == PD_KEY
    assert sla.list_targets(db)["targets"][0]["operator"] == "<="

    before = _stored(db)
    second = config.apply_config(db, settings, DOCUMENT)
    assert (second["changed"], second["unchanged"], second["created"], second["updated"]) == (False, 6, 0, 0)
    assert {o["action"] for o in second["objects"]} == {"unchanged"}
    assert _stored(db) == before  # not even updated_at moved


def test_dry_run_shows_the_changed_fields_and_changes_nothing(db, settings):
    config.apply_config(db, settings, DOCUMENT)
    before = _stored(db)
    changed = json.loads(json.dumps(DOCUMENT))
    changed["alerts"][1]["threshold"] = 3000
    changed["alerts"][1]["enabled"] = False
    changed["webhooks"][0]["secret"] = OTHER_SECRET
    changed["webhooks"][0]["rules"] = []
    changed["sla"][0]["window_hours"] = 48
    result = config.apply_config(db, settings, changed, dry_run=True)
    assert result["dry_run"] is True and result["changed"] is True
    by_name = {o["name"]: o for o in result["objects"]}
    assert by_name["slow"]["changes"] == [{"field": "threshold", "old": 2500.0, "new": 3000.0},
                                          {"field": "enabled", "old": True, "new": False}]
    assert by_name["https://hooks.example.com/obsctl"]["changes"] == [
        {"field": "secret", "old": "***", "new": "***"}, {"field": "rules", "old": ["slow"], "new": []}]
    assert by_name["support-bot error_rate"]["changes"] == [{"field": "window_hours", "old": 24, "new": 48}]
    assert (result["updated"], result["unchanged"]) == (3, 3)
    assert _stored(db) == before

    applied = config.apply_config(db, settings, changed)
    assert _actions(applied) == _actions(result)
    assert db.webhooks.get_webhook("wh_ops")["secret"] == OTHER_SECRET
    assert config.apply_config(db, settings, changed)["changed"] is False


def test_objects_not_listed_are_kept_and_pruning_deletes_them(db, settings):
    config.apply_config(db, settings, DOCUMENT)
    smaller = {"alerts": [DOCUMENT["alerts"][1]],
               "webhooks": [{**DOCUMENT["webhooks"][0]}],
               "sla": []}
    kept = config.apply_config(db, settings, smaller)
    assert (kept["unlisted"], kept["deleted"], kept["changed"]) == (4, 0, False)
    assert [o["name"] for o in kept["objects"] if o["action"] == "unlisted"] == [
        "errors", "https://hooks.slack.com/services/***", "https://events.pagerduty.com/v2/***",
        "support-bot error_rate"]
    assert rules.list_rules(db)["total"] == 2

    pruned = config.apply_config(db, settings, smaller, prune=True)
    assert (pruned["deleted"], pruned["unlisted"]) == (4, 0)
    assert [r["name"] for r in rules.list_rules(db)["rules"]] == ["slow"]
    assert [w["webhook_id"] for w in webhooks.list_webhooks(db)["webhooks"]] == ["wh_ops"]
    assert sla.list_targets(db)["total"] == 0


def test_a_section_left_out_is_not_managed_even_when_pruning(db, settings):
    config.apply_config(db, settings, DOCUMENT)
    result = config.apply_config(db, settings, {"sla": DOCUMENT["sla"]}, prune=True)
    assert _actions(result) == [("sla_target", "support-bot error_rate", "unchanged")]
    assert rules.list_rules(db)["total"] == 2 and webhooks.list_webhooks(db)["total"] == 3


def test_export_then_apply_changes_nothing_and_shows_no_secret(db, settings):
    config.apply_config(db, settings, DOCUMENT)
    exported = config.export_config(db)
    text = json.dumps(exported)
    for secret in (SECRET, PD_KEY, "abcdefghijklmnopqrstuvwx"):
        assert secret not in text
    assert exported["webhooks"][1]["url"] == "https://hooks.slack.com/services/***"
    assert exported["webhooks"][0] == {
        "webhook_id": "wh_ops", "url": "https://hooks.example.com/obsctl", "format": "generic",
        "rules": ["slow"], "enabled": True, "has_secret": True, "has_routing_key": False}
    result = config.apply_config(db, settings, exported, dry_run=True, prune=True)
    assert (result["changed"], result["unchanged"]) == (False, 6)
    # Applied for real too: the secrets and the whole URL are kept.
    config.apply_config(db, settings, exported, prune=True)
    slack = [w for w in db.webhooks.list_webhooks() if w["format"] == "slack"][0]
    assert slack["url"] == SLACK
    assert db.webhooks.get_webhook("wh_ops")["secret"] == SECRET


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d["alerts"][1].update(threshold="high"),
     "alerts[1].threshold: must be a finite number; got 'high'"),
    (lambda d: d["alerts"][0].update(colour="red"),
     "alerts[0].colour: unknown rule field 'colour'"),
    (lambda d: d["alerts"].append({"name": "errors", "metric": "error_rate", "operator": "<", "threshold": 1}),
     "alerts[2].name: alerts[0] has the same name"),
    (lambda d: d["webhooks"][0].update(rules=["nope"]), "webhooks[0].rules[0]: no alert rule named 'nope'"),
    (lambda d: d["webhooks"][0].update(secret_env="X"), "webhooks[0].secret_env: environment variables are read by the client"),
    (lambda d: d["webhooks"][1].update(url="https://hooks.slack.com/services/***"),
     "webhooks[1].url: a masked URL (with ***) only stands for the URL of the stored webhook"),
    (lambda d: d["webhooks"][2].pop("routing_key"), "webhooks[2]: a pagerduty webhook needs a routing_key"),
    (lambda d: d["webhooks"][0].update(secret="generate"), "webhooks[0].secret: 'generate' would make a new secret"),
    (lambda d: d["webhooks"][0].update(webhook_id="ops"), "webhooks[0].webhook_id: must be wh_"),
    (lambda d: d["sla"][0].pop("operator"), "sla[0]: missing required SLA target field: operator"),
    (lambda d: d["sla"][0].update(window_hours=0), "sla[0].window_hours: must be an integer from 1 to 8760"),
    (lambda d: d.update(alert=[]), "alert: unknown section"),
    (lambda d: d.update(version=2), "version: must be 1"),
    (lambda d: d.update(sla={}), "sla: must be a list"),
])
def test_a_problem_is_named_by_its_path_and_nothing_is_applied(db, settings, change, problem):
    document = json.loads(json.dumps(DOCUMENT))
    change(document)
    with pytest.raises(InvalidInput) as raised:
        config.apply_config(db, settings, document)
    assert raised.value.message.startswith(problem), raised.value.message
    assert rules.list_rules(db)["total"] == 0 and webhooks.list_webhooks(db)["total"] == 0
    assert sla.list_targets(db)["total"] == 0


def test_every_problem_is_reported_at_once(db, settings):
    document = json.loads(json.dumps(DOCUMENT))
    document["alerts"][0]["metric"] = "latency"
    document["sla"][0]["target_value"] = "five"
    with pytest.raises(InvalidInput) as raised:
        config.apply_config(db, settings, document)
    assert raised.value.message.startswith("2 problems in the configuration; the first: alerts[0].metric")
    assert [d["field"] for d in raised.value.details] == ["alerts[0].metric", "sla[0].target_value"]


def test_a_rule_name_stored_twice_cannot_be_managed(db, settings):
    for _ in range(2):
        rules.create_rule(db, DOCUMENT["alerts"][0])
    with pytest.raises(InvalidInput, match=r"alerts\[0\].name: 2 stored alert rules are named 'errors'"):
        config.apply_config(db, settings, {"alerts": [DOCUMENT["alerts"][0]]})


def test_a_webhook_is_found_by_its_url_without_an_id(db, settings):
    created = webhooks.create_webhook(db, settings, {"url": "https://hooks.example.com/a"})
    result = config.apply_config(db, settings, {"webhooks": [{"url": "https://hooks.example.com/a", "enabled": False}]})
    assert result["objects"][0]["id"] == created["webhook_id"]
    assert result["objects"][0]["changes"] == [{"field": "enabled", "old": True, "new": False}]


def test_a_webhook_entry_without_secret_keeps_its_secret_and_null_removes_it(db, settings):
    config.apply_config(db, settings, DOCUMENT)
    without = json.loads(json.dumps(DOCUMENT))
    del without["webhooks"][0]["secret"]
    assert config.apply_config(db, settings, without)["changed"] is False
    without["webhooks"][0]["secret"] = None
    result = config.apply_config(db, settings, without)
    assert result["objects"][2]["changes"] == [{"field": "secret", "old": "***", "new": None}]
    assert db.webhooks.get_webhook("wh_ops")["secret"] is None


# The file, the CLI -------------------------------------------------------------------------------

FILE = """\
version: 1
alerts:
  - name: errors
    metric: error_rate
    operator: gt
    threshold: 10
webhooks:
  - webhook_id: wh_ops
    url: https://hooks.example.com/obsctl
    secret_env: TEST_HOOK_SECRET
    rules: [errors]
  - url_env: TEST_SLACK_URL
    format: slack
sla:
  - agent_name: support-bot
    metric: error_rate
    operator: le
    target_value: 5
"""
ENV = {"TEST_HOOK_SECRET": SECRET, "TEST_SLACK_URL": SLACK}


def test_cli_apply_reads_secrets_from_the_environment(cli, db, tmp_path):
    path = tmp_path / "obsctl.yaml"
    path.write_text(FILE)
    dry = cli("apply", "-f", str(path), "--dry-run", "--exit-code", env=ENV)
    assert dry.exit_code == 3, dry.output
    assert dry.stdout.splitlines()[-1] == ("Dry run: 4 to create, 0 to update, 0 to delete; 0 unchanged. "
                                           "Nothing was changed.")
    assert rules.list_rules(db)["total"] == 0
    applied = cli("apply", "-f", str(path), env=ENV)
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[0] == "create     alert rule  errors"
    assert applied.stdout.splitlines()[-1] == "Applied: 4 created, 0 updated, 0 deleted; 0 unchanged."
    assert db.webhooks.get_webhook("wh_ops")["secret"] == SECRET
    again = cli("apply", "-f", str(path), "--exit-code", env=ENV)
    assert again.exit_code == 0
    assert again.stdout.splitlines()[-1] == "No changes: 4 objects already as the file says."
    assert SECRET not in applied.output + again.output and "abcdefghijklmnop" not in applied.output


def test_cli_export_config_round_trips_and_prints_no_secret(cli, tmp_path):
    path = tmp_path / "obsctl.yaml"
    path.write_text(FILE)
    assert cli("apply", "-f", str(path), env=ENV).exit_code == 0
    exported = cli("export-config")
    assert exported.exit_code == 0
    assert exported.stdout.startswith("# obsctl configuration")
    assert SECRET not in exported.stdout and "abcdefghijklmnop" not in exported.stdout
    document = yaml.safe_load(exported.stdout)
    assert [w["url"] for w in document["webhooks"]] == ["https://hooks.example.com/obsctl",
                                                        "https://hooks.slack.com/services/***"]
    out = tmp_path / "exported.yaml"
    assert cli("export-config", "-o", str(out)).exit_code == 0
    assert out.read_text() == exported.stdout
    check = cli("apply", "-f", str(out), "--dry-run", "--prune", "--exit-code", env={})
    assert check.exit_code == 0, check.output
    assert check.stdout.splitlines()[-1] == "Dry run: no changes; 4 unchanged."
    as_json = cli("export-config", "--json")
    assert json.loads(as_json.stdout) == document


@pytest.mark.parametrize(("text", "env", "message"), [
    (FILE.replace("threshold: 10", "threshold: ten"), ENV,
     "Error: obsctl.yaml:6: alerts[0].threshold: must be a finite number; got 'ten'\n"),
    (FILE, {"TEST_SLACK_URL": SLACK},
     "Error: obsctl.yaml:10: webhooks[0].secret_env: the environment variable TEST_HOOK_SECRET is not set\n"),
    (FILE.replace("secret_env: TEST_HOOK_SECRET", f"secret: {SECRET}"), ENV,
     "Error: obsctl.yaml:10: webhooks[0].secret: a secret does not go in the file: put it in an environment "
     "variable and name that with secret_env\n"),
    (FILE.replace("rules: [errors]", "rules: [errors, nope]"), ENV,
     "Error: obsctl.yaml:11: webhooks[0].rules[1]: no alert rule named 'nope' (in the file or, without "
     "prune, stored)\n"),
    (FILE.replace("    operator: le\n", ""), ENV,
     "Error: obsctl.yaml:15: sla[0]: missing required SLA target field: operator\n"),
    (FILE.replace("  - name: errors", "  - name: [errors"), ENV,
     "Error: obsctl.yaml:4:11: not valid YAML: expected ',' or ']', but got ':'\n"),
    (FILE.replace("    metric: error_rate\n    operator: gt", "    metric: error_rate\n    metric: x\n    operator: gt", 1),
     ENV, "Error: obsctl.yaml:5: alerts[0].metric: appears twice (line 4 and 5)\n"),
])
def test_cli_problems_name_the_line_and_path(cli, db, tmp_path, monkeypatch, text, env, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obsctl.yaml").write_text(text)
    result = cli("apply", "-f", "obsctl.yaml", env={"TEST_HOOK_SECRET": None, **env})
    assert result.exit_code == 1
    assert result.stderr == message
    assert "Traceback" not in result.output
    assert rules.list_rules(db)["total"] == 0


def test_cli_several_problems_are_listed_with_their_lines(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obsctl.yaml").write_text(FILE.replace("metric: error_rate\n    operator: gt", "metric: nope\n    operator: gt")
                                          .replace("target_value: 5", "target_value: high"))
    result = cli("apply", "-f", "obsctl.yaml", env=ENV)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: 2 problems in obsctl.yaml:",
        "  obsctl.yaml:4: alerts[0].metric: must be one of avg_duration_ms, p95_duration_ms, error_rate, "
        "tool_error_rate, avg_tokens, avg_cost, session_count, or avg_score:NAME; got 'nope'",
        "  obsctl.yaml:18: sla[0].target_value: must be a finite number; got 'high'"]


# HTTP ---------------------------------------------------------------------------------------------

def test_http_apply_dry_run_prune_and_config(client):
    dry = client.post("/apply?dry_run=true", json=DOCUMENT)
    assert dry.status_code == 200
    assert (dry.json["dry_run"], dry.json["created"]) == (True, 6)
    assert client.get("/alerts/rules").json["total"] == 0
    applied = client.post("/apply", json=DOCUMENT)
    assert (applied.status_code, applied.json["created"]) == (200, 6)
    exported = client.get("/config")
    assert exported.status_code == 200
    assert SECRET not in exported.get_data(as_text=True)
    again = client.post("/apply?prune=true", json=exported.json)
    assert (again.json["changed"], again.json["prune"], again.json["unchanged"]) == (False, True, 6)
    pruned = client.post("/apply?prune=true", json={"alerts": []})
    assert (pruned.json["deleted"], client.get("/alerts/rules").json["total"]) == (2, 0)


def test_http_apply_refuses_environment_names_and_reports_paths(client):
    answer = client.post("/apply", json={"webhooks": [{"url": "https://hooks.example.com/x", "secret_env": "X"}],
                                         "sla": [{"agent_name": "a"}]})
    assert answer.status_code == 400
    assert answer.json["error"].startswith("2 problems in the configuration; the first: webhooks[0].secret_env")
    assert [d["field"] for d in answer.json["details"]] == ["webhooks[0].secret_env", "sla[0]"]
    assert client.post("/apply?dry_run=maybe", json={}).status_code == 400
    assert client.post("/apply", data="[1", content_type="application/json").status_code == 400
    assert client.post("/apply", json=[]).json["error"] == "(document): must be an object with the sections alerts, webhooks and sla"
