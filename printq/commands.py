"""The Typer app behind ``printq --help``, ``printq query``, ``printq metrics`` and ``printq serve``.

``printq.cli.main`` answers the plain query form itself and only imports this module for the rest,
so typer and rich stay off the hot path.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from printq import __version__
from printq.answer import exit_code, run_query_command
from printq.errors import DataUnavailable, InvalidSetting
from printq.settings import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_THREADS, load_settings

HELP = """Count, compare and aggregate bioprinting metrics, from the command line or over HTTP.

Ask a question with three words, METRIC COMPARISON VALUE; the answer is one JSON number.

Examples:

\b
    printq livePercent greater 50      # 6861 prints with more than 50% live cells
    printq wellplate equal 96          # count of prints on 96-well plates
    printq elasticity any Average      # aggregates: Maximum, Minimum, Average

Names are case-insensitive. The data is the bundled BioBots dataset unless --data PATH or
PRINTQ_DATA points elsewhere. Run 'printq metrics' to see the 11 metrics.
"""

DataOption = Annotated[
    str | None,
    typer.Option("--data", metavar="PATH", show_default=False,
                 help="JSON data file, a regular file of at most $PRINTQ_MAX_DATA_BYTES bytes (1 GiB) "
                      "(default: $PRINTQ_DATA, else the bundled dataset)."),
]


def _version(value: bool) -> None:
    if value:
        print(f"printq {__version__}")
        raise typer.Exit()


def _fail(message: str, code: int) -> None:
    print(f"Error: {message}", file=sys.stderr)
    raise typer.Exit(code)


MetricArgument = Annotated[
    str, typer.Argument(metavar="METRIC", help="One of the 11 metrics, e.g. livePercent ('printq metrics').")
]
ComparisonArgument = Annotated[
    str, typer.Argument(metavar="COMPARISON", help="greater, lesser or equal (ignored for aggregates).")
]
ValueArgument = Annotated[
    str, typer.Argument(metavar="VALUE", help="A number (50, -3, 0.25, 1e3) or Maximum, Minimum, Average.")
]


def query(metric: MetricArgument, comparison: ComparisonArgument, value: ValueArgument,
          data: DataOption = None) -> None:
    """Answer one query and print the bare JSON number. Same as 'printq METRIC COMPARISON VALUE'.

    Counts are integers; Average is always a float; Maximum and Minimum are integers for integer
    metrics. Equality on double metrics uses an absolute tolerance of 1e-9. Exit codes: 0 answer,
    1 invalid query or no valid records, 2 data file unreadable or a usage error.

    \b
    Example:
        printq query livePercent greater 50
    """
    code = run_query_command(metric, comparison, value, data)
    if code:
        raise typer.Exit(code)


def metrics(
    data: DataOption = None,
    json_: Annotated[bool, typer.Option("--json", help="Print a JSON array instead of a table.")] = False,
) -> None:
    """List the 11 metrics with group, type, unit, valid count, minimum, maximum and average.

    A table on a terminal, tab-separated text when piped, a JSON array with --json.

    \b
    Examples:
        printq metrics
        printq metrics --json
    """
    from printq.dataset import Dataset
    from printq.queries import describe_metrics

    try:
        settings = load_settings(data)
        dataset = Dataset(settings.data_path, settings.cache_dir, max_bytes=settings.max_data_bytes)
        rows = describe_metrics(dataset.snapshot())
    except (DataUnavailable, InvalidSetting) as exc:
        _fail(exc.message, exit_code(exc))
    if json_:
        print(json.dumps(rows, indent=2))
    elif sys.stdout.isatty():
        from printq.render import metrics_table

        metrics_table(rows, settings.data_path)
    else:
        from printq.render import metrics_tsv

        sys.stdout.write(metrics_tsv(rows))


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(envvar="PORT", min=0, max=65535,
                                      help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    data: DataOption = None,
    threads: Annotated[int, typer.Option(min=1, max=256, help="Worker threads.")] = DEFAULT_THREADS,
    get: Annotated[str | None, typer.Option(
        "--get", metavar="PATH",
        help="Do not listen: answer one GET request for PATH, print the body, exit 1 unless 200."
    )] = None,
) -> None:
    """Serve GET /api/prints/{metric}/{comparison}/{value} and GET /health over HTTP (waitress).

    The data file is re-checked on every request and reloaded when it changes; a broken rewrite
    keeps the last good data. SIGTERM or Ctrl-C stops the server after the requests in flight.

    \b
    Examples:
        printq serve --port 8080
        curl http://127.0.0.1:8080/api/prints/livePercent/greater/50
        printq serve --get /api/prints/livePercent/greater/50
    """
    import logging

    from printq.web import create_app

    try:
        settings = load_settings(data, host=host, port=port, threads=threads)
    except InvalidSetting as exc:
        _fail(exc.message, exit_code(exc))
    app = create_app(settings)
    if get is not None:
        response = app.test_client().get(get)
        print(response.get_data(as_text=True))
        raise typer.Exit(0 if response.status_code == 200 else 1)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:  # load now so the first request is fast and a broken file is reported at start-up
        records = app.extensions["printq.dataset"].snapshot().records
    except DataUnavailable:
        records = None  # already logged; the server answers 503 until the file becomes readable
    from printq.server import serve as run_server

    try:
        run_server(app, settings, records)
    except OSError as exc:  # port in use, no permission for a low port
        _fail(f"Cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}.", 1)
    except ValueError as exc:  # waitress' verdict on a host name it cannot resolve
        _fail(f"Cannot listen on {settings.host}:{settings.port}: {exc}", 1)


def build_app() -> typer.Typer:
    """The Typer app (built on demand: no module-level app)."""
    app = typer.Typer(name="printq", help=HELP, no_args_is_help=True, add_completion=True,
                      rich_markup_mode=None, pretty_exceptions_show_locals=False,
                      context_settings={"help_option_names": ["-h", "--help"]})

    @app.callback()
    def root(
        version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                              help="Show the version and exit.")] = False,
    ) -> None:
        pass

    # ignore_unknown_options lets a negative VALUE such as -3 through as an argument.
    app.command("query", context_settings={"ignore_unknown_options": True})(query)
    app.command("metrics")(metrics)
    app.command("serve")(serve)
    return app


def run_app(args: list[str]) -> int:
    """Run the Typer app on ``args`` and return its exit code instead of exiting."""
    try:
        build_app()(args=args, prog_name="printq")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0
