"""obsctl's SQLite store: `sqlite_store.SqliteStore` (the unit of work and its repositories),
`db` (opening, pragmas, migrations, transactions), `writer` (the server's write queue),
`schema` (the migrations) and one module of SQL per area (`sessions`, `ingest`, `alerts`, ...).

Only `obsctl.store` (its `open_store`), tests and benchmarks import this package; services see the
backend-neutral `obsctl.store.Store`.
"""
