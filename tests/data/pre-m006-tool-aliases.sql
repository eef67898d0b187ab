-- An obsctl database written by the code before migration m006 (tool_name/tool_input/tool_output
-- aliases): tests/data/sdk-session.jsonl and tests/data/tool-alias-cases.jsonl ingested, then
-- dumped with sqlite3's iterdump. tests/test_tool_aliases.py checks that m006 brings it up to date.
BEGIN TRANSACTION;
CREATE TABLE "_sqlite_migrations" (
   "id" INTEGER PRIMARY KEY,
   "migration_set" TEXT,
   "name" TEXT,
   "applied_at" TEXT
);
INSERT INTO "_sqlite_migrations" VALUES(1,'obsctl','m001_sessions_and_events','2026-11-23 06:48:37.443123+00:00');
INSERT INTO "_sqlite_migrations" VALUES(2,'obsctl','m002_alerts_webhooks_sla','2026-11-23 06:48:37.449660+00:00');
INSERT INTO "_sqlite_migrations" VALUES(3,'obsctl','m003_analytics_event_stats','2026-11-23 06:48:37.449988+00:00');
INSERT INTO "_sqlite_migrations" VALUES(4,'obsctl','m004_alert_metric_and_delivery_indexes','2026-11-23 06:48:37.450265+00:00');
INSERT INTO "_sqlite_migrations" VALUES(5,'obsctl','m005_scorecard_event_stats_index','2026-11-23 06:48:37.450473+00:00');
CREATE TABLE alert_events (
            alert_id TEXT PRIMARY KEY,
            rule_id TEXT NOT NULL REFERENCES alert_rules(rule_id) ON DELETE CASCADE,
            rule_name TEXT NOT NULL,
            metric TEXT NOT NULL,
            operator TEXT NOT NULL,
            threshold REAL NOT NULL,
            value REAL,
            window_minutes INTEGER NOT NULL,
            agent_filter TEXT,
            fired_at TEXT NOT NULL,
            acknowledged INTEGER NOT NULL DEFAULT 0,
            acknowledged_at TEXT
        );
CREATE TABLE alert_rules (
            rule_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            metric TEXT NOT NULL,
            operator TEXT NOT NULL,
            threshold REAL NOT NULL,
            window_minutes INTEGER NOT NULL DEFAULT 60,
            cooldown_minutes INTEGER NOT NULL DEFAULT 15,
            agent_filter TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_fired_at TEXT
        );
CREATE TABLE event_stats (
    event_type TEXT NOT NULL,
    hour INTEGER NOT NULL,
    model TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    duration_sum REAL NOT NULL,
    duration_count INTEGER NOT NULL,
    PRIMARY KEY (event_type, hour, model)
) WITHOUT ROWID
;
INSERT INTO "event_stats" VALUES('agent_call',9,'',1,0,0,14200.0,1);
INSERT INTO "event_stats" VALUES('agent_error',9,'',1,0,0,12.0,1);
INSERT INTO "event_stats" VALUES('llm_call',9,'gpt-4o',2,1067,99,1690.75,2);
INSERT INTO "event_stats" VALUES('session_end',9,'',1,0,0,0.0,0);
INSERT INTO "event_stats" VALUES('session_start',9,'',1,0,0,0.0,0);
INSERT INTO "event_stats" VALUES('tool_call',9,'',3,0,0,360.0,3);
INSERT INTO "event_stats" VALUES('tool_call',10,'',5,0,0,10093.0,5);
INSERT INTO "event_stats" VALUES('tool_error',9,'',1,0,0,30012.0,1);
CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            event_id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
            event_type TEXT NOT NULL,
            timestamp TEXT NOT NULL,
            model TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            duration_ms NUMERIC,
            input_data TEXT,
            output_data TEXT,
            tool_call TEXT,
            decision_trace TEXT,
            metadata TEXT,
            agent_name TEXT,
            tool_name TEXT,
            is_error INTEGER NOT NULL DEFAULT 0,
            parent_id TEXT
        );
INSERT INTO "events" VALUES(1,'sdk-weather-001-00','sdk-weather-001','session_start','2026-01-15T09:30:00.000Z',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'{"sdk":"python","user_id":"u-4821"}','weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(2,'sdk-weather-001-01','sdk-weather-001','agent_call','2026-01-15T09:30:00.050Z',NULL,NULL,NULL,14200,'{"args":["What''s the weather in Lisbon, in Fahrenheit?"],"kwargs":{}}',NULL,NULL,'{"reasoning":"Geocode the city, fetch the forecast, convert the unit","step":1,"function":"answer_weather_question"}',NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(3,'sdk-weather-001-02','sdk-weather-001','llm_call','2026-01-15T09:30:00.100Z','gpt-4o',412,58,910.5,'{"prompt":"What''s the weather in Lisbon, in Fahrenheit?"}','{"text":"I''ll look up Lisbon''s coordinates first."}',NULL,NULL,NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(4,'sdk-weather-001-03','sdk-weather-001','tool_call','2026-01-15T09:30:01.100Z',NULL,NULL,NULL,118,NULL,NULL,'{"tool_call_id":"call_8f3a01","tool_name":"geocode","tool_input":{"city":"Lisbon"},"tool_output":{"lat":38.72,"lon":-9.14}}',NULL,NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(5,'sdk-weather-001-04','sdk-weather-001','tool_error','2026-01-15T09:30:01.300Z',NULL,NULL,NULL,30012,NULL,NULL,'{"tool_call_id":"call_8f3a02","tool_name":"weather_api","tool_input":{"lat":38.72,"lon":-9.14},"tool_output":{"error":"HTTP 503","error_type":"RuntimeError"}}',NULL,NULL,'weather-agent',NULL,1,NULL);
INSERT INTO "events" VALUES(6,'sdk-weather-001-05','sdk-weather-001','tool_call','2026-01-15T09:30:31.400Z',NULL,NULL,NULL,240,NULL,NULL,'{"tool_call_id":"call_8f3a03","tool_name":"weather_api","tool_input":{"lat":38.72,"lon":-9.14},"tool_output":{"temp_c":21.5,"conditions":"sunny"}}',NULL,NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(7,'sdk-weather-001-06','sdk-weather-001','tool_call','2026-01-15T09:30:31.700Z',NULL,NULL,NULL,2,NULL,NULL,'{"tool_call_id":"call_8f3a04","tool_name":"calculator","tool_input":{"expression":"21.5 * 9 / 5 + 32"},"tool_output":{"result":70.7}}',NULL,NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(8,'sdk-weather-001-07','sdk-weather-001','llm_call','2026-01-15T09:30:31.800Z','gpt-4o',655,41,780.25,'{"prompt":"Lisbon is 21.5 C (70.7 F), sunny. Answer the user."}','{"text":"It''s sunny in Lisbon, about 70.7 F."}',NULL,NULL,NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(9,'sdk-weather-001-08','sdk-weather-001','agent_error','2026-01-15T09:30:32.600Z',NULL,NULL,NULL,12,'{"args":["It''s sunny in Lisbon, about 70.7 F."],"kwargs":{"channel":"sms"}}','{"error":"reply exceeds 60 characters for channel sms","error_type":"ValueError"}',NULL,'{"reasoning":"Format the answer for the user''s channel","step":2,"function":"format_reply"}',NULL,'weather-agent',NULL,1,NULL);
INSERT INTO "events" VALUES(10,'sdk-weather-001-09','sdk-weather-001','session_end','2026-01-15T09:30:32.700Z',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'weather-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(11,'alias-cases-001-01','alias-cases-001','tool_call','2026-01-15T10:00:01.000Z',NULL,NULL,NULL,10000,NULL,NULL,'{"tool_name":"fetch_url","tool_input":{"url":"https://example.test/a"},"tool_output":{"error":"timed out after 10s","error_type":"TimeoutError"}}',NULL,NULL,'alias-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(12,'alias-cases-001-02','alias-cases-001','tool_call','2026-01-15T10:00:02.000Z',NULL,NULL,NULL,80,NULL,NULL,'{"tool_name":"fetch_url","tool_input":{"url":"https://example.test/b"},"tool_output":{"error":"","body":"ok"}}',NULL,NULL,'alias-agent',NULL,0,NULL);
INSERT INTO "events" VALUES(13,'alias-cases-001-03','alias-cases-001','tool_call','2026-01-15T10:00:03.000Z',NULL,NULL,NULL,5,NULL,NULL,'{"name":"search","tool_name":"ignored_alias","input":{"q":"lisbon"},"tool_input":{"q":"ignored"},"output":{"hits":3},"tool_output":{"hits":0}}',NULL,NULL,'alias-agent','search',0,NULL);
INSERT INTO "events" VALUES(14,'alias-cases-001-04','alias-cases-001','tool_call','2026-01-15T10:00:04.000Z',NULL,NULL,NULL,7,NULL,NULL,'{"name":"search","input":{"q":"porto"},"output":{"hits":5}}',NULL,NULL,'alias-agent','search',0,NULL);
INSERT INTO "events" VALUES(15,'alias-cases-001-05','alias-cases-001','tool_call','2026-01-15T10:00:05.000Z',NULL,NULL,NULL,1,NULL,NULL,'{"tool_name":42,"tool_input":{},"tool_output":{"ok":true}}',NULL,NULL,'alias-agent',NULL,0,NULL);
CREATE TABLE otlp_trace_sessions (
            trace_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL
        );
CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            agent_name TEXT NOT NULL DEFAULT 'unknown',
            started_at TEXT NOT NULL,
            ended_at TEXT,
            metadata TEXT,
            total_tokens_in INTEGER NOT NULL DEFAULT 0,
            total_tokens_out INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'active',
            event_count INTEGER NOT NULL DEFAULT 0,
            error_count INTEGER NOT NULL DEFAULT 0,
            total_duration_ms REAL NOT NULL DEFAULT 0,
            last_event_at TEXT
        );
INSERT INTO "sessions" VALUES('sdk-weather-001','weather-agent','2026-01-15T09:30:00.000Z','2026-01-15T09:30:32.700Z','{"sdk":"python","user_id":"u-4821"}',1067,99,'error',10,2,46274.75,'2026-01-15T09:30:32.700Z');
INSERT INTO "sessions" VALUES('alias-cases-001','alias-agent','2026-01-15T10:00:01.000Z',NULL,NULL,0,0,'active',5,0,10093.0,'2026-01-15T10:00:05.000Z');
CREATE TABLE sla_snapshots (
            id INTEGER PRIMARY KEY,
            agent_name TEXT NOT NULL,
            metric TEXT NOT NULL,
            operator TEXT NOT NULL,
            target_value REAL NOT NULL,
            actual_value REAL,
            status TEXT NOT NULL,
            checked_at TEXT NOT NULL
        );
CREATE TABLE sla_targets (
            agent_name TEXT NOT NULL,
            metric TEXT NOT NULL,
            target_value REAL NOT NULL,
            operator TEXT NOT NULL,
            window_hours INTEGER NOT NULL DEFAULT 24,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (agent_name, metric)
        );
CREATE TABLE webhook_deliveries (
            delivery_id TEXT PRIMARY KEY,
            webhook_id TEXT NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
            alert_id TEXT,
            event_type TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            last_status_code INTEGER,
            next_attempt_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            delivered_at TEXT
        );
CREATE TABLE webhooks (
            webhook_id TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            format TEXT NOT NULL DEFAULT 'generic',
            secret TEXT,
            routing_key TEXT,
            rule_ids TEXT NOT NULL DEFAULT '[]',
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
CREATE UNIQUE INDEX "idx__sqlite_migrations_migration_set_name"
    ON "_sqlite_migrations" ("migration_set", "name");
CREATE INDEX idx_sessions_started ON sessions(started_at);
CREATE INDEX idx_sessions_agent_started ON sessions(agent_name, started_at);
CREATE INDEX idx_sessions_status_started ON sessions(status, started_at);
CREATE INDEX idx_sessions_last_event ON sessions(last_event_at);
CREATE INDEX idx_events_session_ts ON events(session_id, timestamp);
CREATE INDEX idx_events_ts ON events(timestamp);
CREATE INDEX idx_alert_events_fired ON alert_events(fired_at);
CREATE INDEX idx_alert_events_rule ON alert_events(rule_id, fired_at);
CREATE INDEX idx_deliveries_status_next ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX idx_deliveries_created ON webhook_deliveries(created_at);
CREATE INDEX idx_sla_snapshots_checked ON sla_snapshots(checked_at);
CREATE INDEX idx_sla_snapshots_agent ON sla_snapshots(agent_name, checked_at);
CREATE INDEX idx_sessions_agent_last_event ON sessions(agent_name, last_event_at);
CREATE INDEX idx_deliveries_webhook ON webhook_deliveries(webhook_id, created_at);
CREATE INDEX idx_events_session_stats ON events(session_id, event_type, is_error, duration_ms, tokens_in, tokens_out, model);
COMMIT;
