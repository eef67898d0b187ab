"""Use cases of obsctl: plain data in and out, errors from obsctl.errors, no CLI/web imports."""
