"""The API key of remote mode, read from a file the way ssh reads a private key: only when
nobody but its owner can read it, and never echoed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from obsctl.errors import InvalidInput


def check_private(path: Path, what: str) -> None:
    """InvalidInput when `path` can be read or written by its group or by others."""
    info = os.stat(path)
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InvalidInput(f"permissions {stat.S_IMODE(info.st_mode):04o} for {path} are too open: "
                           f"{what} must be readable by its owner only (chmod 600 {path})")


def read_key_file(path: Path) -> str:
    """The key in `path` (surrounding whitespace removed). Refused when the file can be read
    or written by its group or by others, as ssh refuses such a private key."""
    try:
        check_private(path, "an API key file")
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise InvalidInput(f"no API key file at {path}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not a text file holding an API key") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read the API key file {path}: {exc.strerror}") from None
    if not key:
        raise InvalidInput(f"the API key file {path} is empty")
    if any(c in key for c in "\r\n\x00"):
        raise InvalidInput(f"the API key file {path} must hold the key on one line")
    return key
