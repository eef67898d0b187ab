"""Remote mode: the CLI's second adapter, which asks an `obsctl serve` over HTTP instead of
calling the services in-process. `obsctl.client.http.Client` sends the requests; errors come
back as obsctl's own exceptions, so commands report them exactly as in local mode. One module
per area (`sessions`, `alerts`, ...) answers each use case of `obsctl.services.<area>`.

Nothing is imported here: a command that opens a database never loads `requests`."""
