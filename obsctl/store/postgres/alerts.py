"""Alert rules and alert events: written once for both stores in obsctl/store/sql/alerts.py."""

from obsctl.store.sql.alerts import *  # noqa: F403 (the store's repository binds these)
