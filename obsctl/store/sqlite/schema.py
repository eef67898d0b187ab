"""Schema migrations (sqlite-utils `Migrations`), registered here in the order they apply;
the migrations themselves are in migrations_early.py (m001-m013) and migrations_late.py
(m016 on). Append-only: never edit an applied one."""

from __future__ import annotations

from sqlite_utils import Migrations

from obsctl.store.sqlite import migrations_early as early
from obsctl.store.sqlite import migrations_late as late

migrations = Migrations("obsctl")

_ORDER = (
    early.m001_sessions_and_events,
    early.m002_alerts_webhooks_sla,
    early.m003_analytics_event_stats,
    early.m004_alert_metric_and_delivery_indexes,
    early.m005_scorecard_event_stats_index,
    early.m006_tool_call_aliases,
    early.m007_session_body_event_counts,
    early.m008_webhook_allow_private,
    early.m009_analytics_counters,
    early.m010_sessions_newest_first,
    early.m011_events_errors_index,
    early.m012_alert_resolution,
    early.m013_rule_severity,
    late.m016_session_tags_and_scores,
    late.m017_session_idle_completion,
    late.m018_dashboard_secret,
    late.m019_change_acks,
    late.m020_events_ingest_order,
    # Before m021: m021 and m039 fill costs and the rollup with the SQL of today, which reads
    # these columns. A database past m040 applies it last.
    late.m031_cache_and_reasoning_tokens,
    late.m021_session_costs,
    late.m022_event_search,
    late.m024_session_filter_indexes,
    late.m025_search_indexed_text_cap,
    late.m029_dashboard_logins,
    late.m027_session_breakdown_index,
    late.m028_session_breakdown_order,
    late.m039_event_stats_costs,
    late.m040_session_stats_costs,
    late.m032_background_sessions,
    late.m033_session_breakdown_tokens,
    late.m034_long_session_reads,
    late.m036_search_after_commit,
)
for _migration in _ORDER:
    migrations()(_migration)
