"""Remote mode: the CLI's second adapter, which asks an `obsctl serve` over HTTP instead of
calling the services in-process. `Client` sends the requests; errors come back as obsctl's
own exceptions, so commands report them exactly as in local mode."""

from obsctl.client.http import Client, api_path, retry_after_seconds

__all__ = ["Client", "api_path", "retry_after_seconds"]
