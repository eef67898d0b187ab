"""Shared CLI plumbing: error translation (the one place), settings, stderr messages.

Output on stdout (JSON, tables, numbers) is in `obsctl.cli.output`."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

import typer
from typer.core import TyperArgument, TyperCommand

from obsctl.config import Settings
from obsctl.errors import ObsctlError
from obsctl.text import visible_text

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_FIRED = 0, 1, 2, 3


def translate_errors(func: Callable) -> Callable:
    """Turn obsctl errors into a one-line message on stderr and exit code 1."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ObsctlError as exc:
            error(exc.message)
            for detail in (exc.details or [])[:20]:
                where = f"[{detail.get('index')}]" if detail.get("index") is not None else ""
                field = f".{detail['field']}" if detail.get("field") else ""
                error(f"  {where}{field} {detail.get('message')}")
            raise typer.Exit(EXIT_FAILURE) from None
        except BrokenPipeError:
            # `obsctl ... | head`: the reader went away; not an error worth a traceback.
            sys.stderr.close()
            raise typer.Exit(EXIT_OK) from None

    return wrapper


class ObsCommand(TyperCommand):
    """A command whose usage line reads the Unix way: `obsctl explain [OPTIONS] SESSION_ID`,
    optional arguments in brackets (`[FILE|-]`). Typer's own form writes required arguments
    as `{session_id}`, which reads like a template placeholder."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument) and param.metavar is None:
                param.metavar = param.name.upper()

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if not isinstance(param, TyperArgument):
                pieces.extend(param.get_usage_pieces(ctx))
                continue
            metavar = param.metavar or param.name or ""
            name = metavar if param.required else f"[{metavar}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
        return pieces


class ObsTyper(typer.Typer):
    """A Typer app whose commands report obsctl errors as one line, never a traceback."""

    def __init__(self, **kwargs):
        kwargs.setdefault("no_args_is_help", True)
        kwargs.setdefault("rich_markup_mode", None)
        kwargs.setdefault("pretty_exceptions_enable", False)
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        super().__init__(**kwargs)

    def command(self, *args, **kwargs):
        kwargs.setdefault("cls", ObsCommand)
        register = super().command(*args, **kwargs)

        def decorator(func):
            register(translate_errors(func))
            return func

        return decorator


def settings_of(ctx: typer.Context) -> Settings:
    root = ctx.find_root()
    if root.obj is None:
        root.obj = Settings.from_env()
    return root.obj


def open_database(ctx: typer.Context):
    """For commands that add data (ingest, serve, adding a rule, ...): the store; the database
    and its directory are created when missing."""
    return _store(ctx, "create")


def open_existing(ctx: typer.Context):
    """For commands that change or delete existing data: `no database at PATH` when missing."""
    return _store(ctx, "existing")


def open_readonly(ctx: typer.Context):
    """For commands that only read: opened read-only (works on read-only storage), nothing
    created, `no database at PATH` when missing, so a mistyped path is not an empty result."""
    return _store(ctx, "read")


def _store(ctx: typer.Context, mode: str):
    from obsctl.services.storage import open_store

    # A command that opens the database itself has no remote counterpart: under --url it must
    # not fall back to the local default database.
    local_only(ctx, ctx.command_path)
    # One store per command and mode: a command running several use cases opens it once.
    opened = ctx.find_root().meta.setdefault("obsctl.stores", {})
    if mode in opened:
        return opened[mode]
    store = opened[mode] = open_store(settings_of(ctx), mode=mode)
    # Closed when the command ends, however it ends: the last connection out checkpoints and
    # removes the WAL file. Not left to the collector at exit, which `gcpolicy` makes lazier.
    ctx.call_on_close(store.close)
    return store


def run(ctx: typer.Context, use_case: Callable, *args, opening: str = "read", **kwargs):
    """Run a use case where the data is, and return its result.

    `use_case` is a service function (`obsctl.services.<area>...`) whose first parameter is the
    store. Locally the store is opened (`opening`: read, existing or create, as
    `open_readonly`, `open_existing` and `open_database`) and passed to it. With --url the
    function of the same name in `obsctl.client.<area>` is called with the server's client
    instead: it asks the HTTP API for the same data, so the command renders the same result
    without knowing where it came from.
    """
    if settings_of(ctx).remote_url:
        return remote_use_case(use_case)(client_of(ctx), *args, **kwargs)
    return use_case(_store(ctx, opening), *args, **kwargs)


def remote_use_case(use_case: Callable) -> Callable:
    """The remote counterpart of a service function: `obsctl.client.<area>.<same name>`."""
    import importlib

    from obsctl.client.reads import remote_read

    area = use_case.__module__.split(".")[2]
    try:
        client = importlib.import_module(f"obsctl.client.{area}")
    except ModuleNotFoundError:  # an area whose reads are all declared (models/reads.py)
        client = None
    remote = getattr(client, use_case.__name__, None) or remote_read(use_case)
    if remote is None:  # pragma: no cover - every use case the CLI runs has one (tests check)
        raise AssertionError(f"obsctl.client.{area} has no {use_case.__name__}")
    return remote


def client_of(ctx: typer.Context):
    """The HTTP client for --url, made once per command and closed when it ends."""
    root = ctx.find_root()
    client = root.meta.get("obsctl.client")
    if client is None:
        from obsctl.client.http import Client

        settings = settings_of(ctx)
        if settings.remote_url is None:
            raise RuntimeError("a remote command ran without --url")
        client = root.meta["obsctl.client"] = Client(settings.remote_url, settings.remote_api_key)
        root.call_on_close(client.close)
    return client


def local_only(ctx: typer.Context, what: str) -> None:
    """Refuse a command that works on a database, not through a server, under --url (exit 2)."""
    if settings_of(ctx).remote_url:
        raise typer.BadParameter(f"`{what}` works on a database and cannot run against a server; "
                                 f"drop --url or --profile, or give --db (which wins over $OBSCTL_URL "
                                 f"and $OBSCTL_PROFILE)", param_hint="--url")


def error(message: str) -> None:
    """An error on stderr. Messages may quote stored data or a server's answer: their control
    characters are shown as \\xNN, as on stdout (cli/output.py)."""
    message = visible_text(message)
    sys.stderr.write(f"Error: {message}\n" if not message.startswith("  ") else f"{message}\n")


def notice(message: str) -> None:
    sys.stderr.write(visible_text(message) + "\n")
