"""The root command's sub-commands, imported when one runs: `obsctl --help`, shell completion
and a cron's `obsctl alerts evaluate` import only the command module they use (and its
services), not all twenty of them.

Each command is named here with the module and attribute that define it and the first sentence
of its help, which `obsctl --help` and shell completion show without importing the module
(tests/obsctl/test_startup.py checks that it is the command's own first sentence).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass

from typer.core import TyperGroup


@dataclass(frozen=True)
class Lazy:
    module: str  # obsctl.cli.<module>
    attribute: str  # a command function, or a Typer app for a group of commands
    summary: str  # the first sentence of its help


def load(name: str, lazy: Lazy):
    """The click command `name` stands for, built the way Typer builds a registered one."""
    import typer

    from obsctl.cli.base import ObsTyper

    target = getattr(importlib.import_module(f"obsctl.cli.{lazy.module}"), lazy.attribute)
    if isinstance(target, typer.Typer):
        group = typer.main.get_group(target)
        group.name = name
        return group
    holder = ObsTyper(add_completion=False)
    holder.command(name)(target)
    command = typer.main.get_command(holder)
    command.name = name
    return command


class LazyCommands(MutableMapping):
    """Names in order; a command is built on first access (`items()` builds them all)."""

    def __init__(self, lazy: dict[str, Lazy]):
        self.lazy = lazy
        self.loaded: dict = {}

    def __getitem__(self, name: str):
        if name not in self.loaded:
            if name not in self.lazy:
                raise KeyError(name)
            self.loaded[name] = load(name, self.lazy[name])
        return self.loaded[name]

    def __setitem__(self, name: str, command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self.loaded.pop(name, None)
        self.lazy.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self.lazy
        yield from (name for name in self.loaded if name not in self.lazy)

    def __len__(self) -> int:
        return len(set(self.lazy) | set(self.loaded))

    def __contains__(self, name: object) -> bool:
        return name in self.lazy or name in self.loaded


class LazyGroup(TyperGroup):
    """A group whose `commands` are LazyCommands over `LAZY` (set by a subclass)."""

    LAZY: dict[str, Lazy] = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        commands = LazyCommands(dict(self.LAZY))
        for name, command in self.commands.items():
            commands[name] = command
        self.commands = commands

    def list_commands(self, ctx) -> list[str]:
        return list(self.commands)

    def _summaries(self, incomplete: str = "") -> list[tuple[str, str]]:
        return [(name, lazy.summary) for name, lazy in self.LAZY.items() if name.startswith(incomplete)]

    def format_commands(self, ctx, formatter) -> None:
        from typer._click.utils import make_default_short_help

        rows = self._summaries()
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, make_default_short_help(text, limit)) for name, text in rows])

    def shell_complete(self, ctx, incomplete: str):
        from typer._click.core import Command
        from typer._click.shell_completion import CompletionItem
        from typer._click.utils import make_default_short_help

        results = [CompletionItem(name, help=make_default_short_help(text))
                   for name, text in self._summaries(incomplete)]
        results.extend(Command.shell_complete(self, ctx, incomplete))
        return results
