"""Change detection's SQL: written once for both stores in obsctl/store/sql/changes.py."""

from obsctl.store.sql.changes import (  # noqa: F401 (the store's repository binds these)
    SESSION_COLUMNS,
    acknowledge,
    acknowledged,
    llm_durations,
    window_model_tokens,
    window_sessions,
)
