"""Options validated when the command line is parsed: a bad value is a usage error (exit 2).

The checks are the services' own (the ones the HTTP API applies, with the same messages), run
as Typer callbacks, so `--limit 0`, `--status bogus` or `--operator foo` stop before the
database is opened, with "Invalid value for '--limit': ..." and exit code 2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from obsctl.errors import InvalidInput
from obsctl.params import IntParam


def checked(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A Typer callback applying a service check; InvalidInput becomes a usage error."""

    def callback(value: Any) -> Any:
        if value is None:
            return None
        try:
            return check(value)
        except InvalidInput as exc:
            raise typer.BadParameter(exc.message) from None

    return callback


def int_option(param: IntParam, *decls: str, help: str, default: Any = ...,
               show_default: bool | str = True) -> Any:
    """A `typer.Option` for a bounded integer: default, range check and help from `param`.

    `default` overrides the parameter's default (None: "not given", for updates);
    `show_default` may then name the value the service applies.
    """
    text = f"{help.rstrip('.')}, an integer {param.range_text}."
    if isinstance(show_default, str):  # Typer would print it in parentheses
        text, show_default = f"{text}  [default: {show_default}]", False
    return typer.Option(param.default if default is ... else default, *decls,
                        callback=checked(param.check), show_default=show_default, help=text)


def on_off(enable: bool, disable: bool, what: str) -> bool | None:
    """The value of an `--enable`/`--disable` pair: None when neither is given, a usage
    error when both are (Click's `--enable/--disable` would silently keep the last one)."""
    if enable and disable:
        raise typer.BadParameter(f"they contradict each other; give one of them to turn the {what} "
                                 f"on or off", param_hint="'--enable' / '--disable'")
    return True if enable else False if disable else None
