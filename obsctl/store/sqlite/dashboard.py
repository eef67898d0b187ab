"""The dashboard's signing key and logins: written once for both stores in obsctl/store/sql/dashboard.py."""

from obsctl.store.sql.dashboard import *  # noqa: F403 (the store's repository binds these)
