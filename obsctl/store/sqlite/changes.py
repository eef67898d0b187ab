"""Change detection's SQL: written once for both stores in obsctl/store/sql/changes.py."""

from obsctl.store.sql.changes import *  # noqa: F403 (the store's repository binds these)
