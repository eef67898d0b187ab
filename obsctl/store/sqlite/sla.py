"""SLA targets and their snapshots: written once for both stores in obsctl/store/sql/sla.py."""

from obsctl.store.sql.sla import *  # noqa: F403 (the store's repository binds these)
