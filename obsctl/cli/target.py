"""Where a command works: a database, or a server with the key that goes to it.

One rule (docs/remote.md): the command line wins over the environment, which wins over the
config file's profiles. Each layer is asked in that order, and the first that names a place
(`db`, `url` or `profile`) decides it whole; two places named in the same layer are a usage
error. So `--db FILE` on the command line works on FILE even with $OBSCTL_URL set, and
`--profile t` goes to profile t's server even with $OBSCTL_URL set.

A key is only sent to the URL it came with. `--api-key-file` and $OBSCTL_API_KEY belong to the
URL the user gives (`--url` or $OBSCTL_URL; the file wins over the variable); a profile's key
belongs to the profile's URL, and nothing else is sent there. A key file that would go
nowhere (with a database or a profile) is a usage error rather than silently unused.

Settings that are not a place (a coming `--project`) take the same order field by field: the
first of the command line, the environment and the chosen profile that gives one (a field of
`Layer`, of the profile and of `Target`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from obsctl.client.keys import read_key_file
from obsctl.client.profiles import load_profile
from obsctl.errors import InvalidInput

PLACES = ("db", "url", "profile")
# The environment variables of each setting, the first set one counting (as in --help).
ENVIRONMENT = {"db": ("OBSCTL_DATABASE_URL", "OBSCTL_DB"), "url": ("OBSCTL_URL",),
               "profile": ("OBSCTL_PROFILE",), "api_key": ("OBSCTL_API_KEY",)}
OPTIONS = {"db": "--db", "url": "--url", "profile": "--profile", "api_key_file": "--api-key-file"}


@dataclass(frozen=True)
class Layer:
    """What one source of settings gives: `values` (only what it gives) and, for messages,
    each value's name as the user wrote it (`--db`, `$OBSCTL_DB`)."""

    values: Mapping[str, str] = field(default_factory=dict)
    spelled: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def command_line(cls, **given: str | Path | None) -> Layer:
        values = {name: str(value) for name, value in given.items() if value is not None}
        return cls(values, {name: OPTIONS[name] for name in values})

    @classmethod
    def environment(cls, env: Mapping[str, str]) -> Layer:
        values, spelled = {}, {}
        for name, variables in ENVIRONMENT.items():
            for variable in variables:
                if env.get(variable):
                    values[name], spelled[name] = env[variable], f"${variable}"
                    break
        return cls(values, spelled)


@dataclass(frozen=True)
class Target:
    """The place a command works: `db` (None with `url` None: the default database), or the
    server at `url` and the key sent to it."""

    db: str | None = None
    url: str | None = None
    api_key: str | None = None


def typed_layer(ctx) -> Layer:
    """The root command's place options as typed on the command line. A value Typer took
    from an environment variable (the options name theirs for --help) is left out:
    `Layer.environment` reads those. (Typer carries its own click: sources compare by name.)"""
    root = ctx.find_root()
    return Layer.command_line(**{name: root.params.get(name) for name in OPTIONS
                                 if getattr(root.get_parameter_source(name), "name", "") == "COMMANDLINE"})


def resolve_target(command_line: Layer, environment: Layer, *,
                   profiles: Callable = load_profile) -> Target:
    """The place the command line and the environment name (module docstring); InvalidInput
    for a usage mistake. A profile is read (`profiles(name)`) only when it is the place."""
    for layer in (command_line, environment):
        named = [name for name in PLACES if name in layer.values]
        if len(named) > 1:
            first, second = (layer.spelled[name] for name in named[:2])
            why = ("a profile names its server and its key" if "profile" in named[:2] and "url" in named[:2]
                   else "choose a database or a server")
            raise InvalidInput(f"{first} and {second} cannot be combined: {why}")
        if named:
            return _place(named[0], layer, command_line, environment, profiles)
    _no_key_file(command_line, "the default database")
    return Target()


def _place(name: str, layer: Layer, command_line: Layer, environment: Layer, profiles: Callable) -> Target:
    value = layer.values[name]
    if name == "db":
        _no_key_file(command_line, f"the database of {layer.spelled['db']}")
        return Target(db=value)
    if name == "url":
        key_file = command_line.values.get("api_key_file")
        key = read_key_file(Path(key_file)) if key_file else environment.values.get("api_key")
        return Target(url=value, api_key=key)
    _no_key_file(command_line, f"profile {value!r} (whose key is set in the config file)")
    profile = profiles(value)
    return Target(url=profile.url, api_key=profile.api_key)


def _no_key_file(command_line: Layer, place: str) -> None:
    if "api_key_file" in command_line.values:
        raise InvalidInput(f"--api-key-file is the key for --url or $OBSCTL_URL, and this command "
                           f"works on {place}: drop --api-key-file")
