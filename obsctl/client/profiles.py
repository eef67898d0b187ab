"""Named servers for remote mode: `obsctl --profile prod sessions list`.

Profiles live in a TOML file, `$XDG_CONFIG_HOME/obsctl/config.toml` (`~/.config/...`), or the
file `$OBSCTL_CONFIG` names:

    [profiles.prod]
    url = "https://obsctl.example.com"
    api_key_file = "~/.config/obsctl/prod.key"   # or: api_key = "..."

A file holding a key must be readable by its owner only, as ssh requires of a private key;
the key is never printed.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from obsctl.client.keys import check_private, read_key_file
from obsctl.errors import InvalidInput

_FIELDS = frozenset({"url", "api_key", "api_key_file"})


@dataclass(frozen=True)
class Profile:
    name: str
    url: str
    api_key: str | None


def config_path(env: Mapping[str, str]) -> Path:
    """Where profiles are read from: $OBSCTL_CONFIG, else $XDG_CONFIG_HOME/obsctl/config.toml."""
    if env.get("OBSCTL_CONFIG"):
        return Path(env["OBSCTL_CONFIG"]).expanduser()
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "obsctl" / "config.toml"


def load_profile(name: str, env: Mapping[str, str] | None = None) -> Profile:
    """The profile `name` of the config file; InvalidInput saying what is wrong otherwise."""
    env = os.environ if env is None else env
    path = config_path(env)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"no profile {name!r}: there is no config file at {path} "
                           f"(or set OBSCTL_CONFIG)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read the config file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path} is not valid TOML: {exc}") from None
    profiles = document.get("profiles", {})
    entry = profiles.get(name) if isinstance(profiles, dict) else None
    if not isinstance(entry, dict):
        known = ", ".join(sorted(p for p in profiles if isinstance(profiles[p], dict))) if isinstance(
            profiles, dict) else ""
        raise InvalidInput(f"no profile {name!r} in {path}" + (f" (profiles: {known})" if known else ""))
    where = f"profile {name!r} in {path}"
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise InvalidInput(f"{where}: unknown setting {unknown[0]!r} (settings: api_key, api_key_file, url)")
    url = entry.get("url")
    if not isinstance(url, str) or not url:
        raise InvalidInput(f"{where} needs url = \"http://HOST:PORT\"")
    if "api_key" in entry and "api_key_file" in entry:
        raise InvalidInput(f"{where}: set api_key or api_key_file, not both")
    api_key = entry.get("api_key")
    if api_key is not None:
        if not isinstance(api_key, str) or not api_key:
            raise InvalidInput(f"{where}: api_key must be a non-empty string")
        check_private(path, "a config file holding an API key")
    elif "api_key_file" in entry:
        key_file = entry["api_key_file"]
        if not isinstance(key_file, str) or not key_file:
            raise InvalidInput(f"{where}: api_key_file must be a path")
        key_path = Path(key_file).expanduser()
        api_key = read_key_file(key_path if key_path.is_absolute() else path.parent / key_path)
    return Profile(name, url, api_key)
