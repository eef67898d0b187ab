"""The configuration file: YAML that names its secrets by environment variable, read into the
document `apply_config` takes, remembering the line of each place so that a problem reads
`obsctl.yaml:14: alerts[2].threshold: must be a finite number; got 'high'`.

The file never holds a secret: a webhook's `secret` and `routing_key` come from the variables
named by `secret_env` and `routing_key_env`, and its URL may come from `url_env` (a Slack URL
is a credential). They are read here, on the side of the one running `obsctl apply`; a server
never reads its own environment for them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import yaml

from obsctl.errors import InvalidInput
from obsctl.services.configuration.document import SECRET_FIELDS

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FROM_ENV = ("url", *SECRET_FIELDS)
HEADER = ("# obsctl configuration: alert rules, webhooks and SLA targets (docs/configuration-as-code.md).\n"
          "# Apply with: obsctl apply -f FILE. Secrets are not exported: name the environment variables\n"
          "# holding them with secret_env, routing_key_env (and url_env for a URL that is a secret).\n")


class _Loader(yaml.SafeLoader):
    """YAML as JSON sees it: dates stay strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


class ConfigFile(NamedTuple):
    document: Any
    lines: dict[str, int]
    source: str

    def line_of(self, path: str) -> int | None:
        """The line of `path` (`alerts[2].threshold`), else of the nearest place holding it."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = re.sub(r"(\.[^.\[\]]*|\[\d+\])$", "", path)
        return None

    def located(self, path: str, message: str) -> str:
        line = self.line_of(path)
        return f"{self.source}:{line}: {path}: {message}" if line else f"{self.source}: {path}: {message}"


def read_config_file(text: str, *, source: str, environ: Mapping[str, str]) -> ConfigFile:
    """Parse the YAML `text` (from `source`, for messages) and resolve its environment
    variables; InvalidInput (every problem, each with its line) for what is wrong."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        document = loader.construct_document(node) if node is not None else {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InvalidInput(f"{where}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{source}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    lines: dict[str, int] = {}
    problems: list[tuple[str, str]] = []
    if node is not None:
        _walk(node, "", lines, problems)
    config = ConfigFile(document, lines, source)
    if not problems:
        _check_values(document, "", problems)
    if not problems:
        _resolve_env(config, environ, problems)
    if problems:
        raise file_error(config, [{"field": p, "message": m} for p, m in problems])
    return config


def file_error(config: ConfigFile, details: list[dict]) -> InvalidInput:
    """One InvalidInput for the problems of a file, each `FILE:LINE: path: message`."""
    shown = [config.located(d.get("field") or "(document)", d.get("message", "")) for d in details]
    if len(shown) == 1:
        return InvalidInput(shown[0])
    return InvalidInput(f"{len(shown)} problems in {config.source}:\n" + "\n".join(f"  {s}" for s in shown))


def _walk(node: yaml.Node, path: str, lines: dict[str, int], problems: list) -> None:
    lines[path or "(document)"] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else "?"
            child = f"{path}.{name}" if path else name
            if name in seen:
                problems.append((child, f"appears twice (line {lines[child]} and {key.start_mark.line + 1})"))
            seen.add(name)
            lines[child] = key.start_mark.line + 1
            _walk(value, child, lines, problems)
            lines[child] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, f"{path}[{index}]", lines, problems)


def _check_values(value: Any, path: str, problems: list) -> None:
    """Only what JSON can say: string keys, finite numbers, no dates, sets or binary."""
    where = path or "(document)"
    if isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str:
                problems.append((where, f"the key {key!r} must be a string (quote it)"))
                continue
            _check_values(item, f"{path}.{key}" if path else key, problems)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_values(item, f"{path}[{index}]", problems)
    elif isinstance(value, float) and not math.isfinite(value):
        problems.append((where, "must be a finite number"))
    elif value is not None and not isinstance(value, str | int | float | bool):
        problems.append((where, f"must be a string, number, boolean, list or mapping; got {type(value).__name__}"))


def _resolve_env(config: ConfigFile, environ: Mapping[str, str], problems: list) -> None:
    """Replace `secret_env: NAME` by `secret: <value of NAME>` (and routing_key_env, url_env)
    in each webhook; refuse a secret written in the file."""
    document = config.document
    if type(document) is not dict or type(document.get("webhooks")) is not list:
        return
    for index, entry in enumerate(document["webhooks"]):
        if type(entry) is not dict:
            continue
        path = f"webhooks[{index}]"
        for field in FROM_ENV:
            env_key = f"{field}_env"
            if env_key not in entry:
                if field in SECRET_FIELDS and entry.get(field) is not None:
                    problems.append((f"{path}.{field}", f"a secret does not go in the file: put it in an "
                                                        f"environment variable and name that with {env_key}"))
                continue
            name = entry.pop(env_key)
            if field in entry:
                problems.append((f"{path}.{env_key}", f"give {field} or {env_key}, not both"))
                continue
            if type(name) is not str or not ENV_NAME.fullmatch(name):
                problems.append((f"{path}.{env_key}", "must be the name of an environment variable"))
                continue
            value = environ.get(name)
            if not value:
                problems.append((f"{path}.{env_key}", f"the environment variable {name} is not set"))
                continue
            entry[field] = value
            config.lines[f"{path}.{field}"] = config.lines[f"{path}.{env_key}"]


def dump_config(document: dict) -> str:
    """An exported document as the YAML of a configuration file."""
    return HEADER + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=False,
                                   width=100)
