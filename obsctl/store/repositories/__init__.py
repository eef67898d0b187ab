"""The repositories a store hands out, one Protocol per area: what services may call on
`store.<area>`, whatever the backend; declared in this package's modules by what they serve
(events, sessions, fleet).

Each method is the backend's area function without the connection it runs on (the SQLite
store binds `obsctl/store/sqlite/<area>.py`'s functions to its connection, see
`sqlite_store.Repository`). A second backend implements the same methods with the same
parameters; tests/obsctl/test_store_contract.py holds every backend to them and checks that
services call nothing undeclared here.
"""

from __future__ import annotations

from obsctl.store.repositories.events import (
    CostsRepository,
    EventsRepository,
    IngestRepository,
    MaintenanceRepository,
    OtlpRepository,
    SearchRepository,
    TransferRepository,
)
from obsctl.store.repositories.fleet import (
    AlertsRepository,
    ChangesRepository,
    ScorecardsRepository,
    SlaRepository,
    WebhooksRepository,
)
from obsctl.store.repositories.sessions import (
    AnalyticsRepository,
    DashboardRepository,
    MetricsRepository,
    SessionAggregatesRepository,
    SessionsRepository,
    TriageRepository,
)

__all__ = [
    "AlertsRepository",
    "AnalyticsRepository",
    "ChangesRepository",
    "CostsRepository",
    "DashboardRepository",
    "EventsRepository",
    "IngestRepository",
    "MaintenanceRepository",
    "MetricsRepository",
    "OtlpRepository",
    "ScorecardsRepository",
    "SearchRepository",
    "SessionAggregatesRepository",
    "SessionsRepository",
    "SlaRepository",
    "TransferRepository",
    "TriageRepository",
    "WebhooksRepository",
]
