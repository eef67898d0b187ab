"""The PostgreSQL store: pg_store.py (connections, units of work), schema.py (migrations),
partitions.py (weekly partitions of events) and one module of SQL per area, with the same
functions as obsctl/store/sqlite/<area>.py."""
