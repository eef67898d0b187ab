"""Answer one query on the command line, and the one place where errors become exit codes.

Used by both the hand-parsed fast path (``printq.cli``) and the Typer ``query`` command
(``printq.commands``); like ``printq.cli`` it imports nothing slow at module level.
"""

from __future__ import annotations

import sys

from printq.errors import DataUnavailable, InvalidQuery, InvalidSetting, NoData, PrintqError

# The one place where errors become exit codes.
EXIT_CODES: dict[type[PrintqError], int] = {InvalidQuery: 1, NoData: 1, DataUnavailable: 2,
                                            InvalidSetting: 2}


def exit_code(error: PrintqError) -> int:
    return next((code for kind, code in EXIT_CODES.items() if isinstance(error, kind)), 1)


def run_query_command(metric: str, comparison: str, value: str, data: str | None) -> int:
    """Answer one query: the bare JSON number on stdout, or a one-line error on stderr."""
    from printq.dataset import Dataset
    from printq.queries import format_number, parse_query, run_query
    from printq.settings import load_settings

    try:
        query = parse_query(metric, comparison, value)  # bad input is reported before any file I/O
        settings = load_settings(data)
        dataset = Dataset(settings.data_path, settings.cache_dir, max_bytes=settings.max_data_bytes)
        result = run_query(dataset.snapshot(), query)
    except PrintqError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return exit_code(exc)
    print(format_number(result))
    return 0
