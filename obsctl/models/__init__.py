"""Declared models: the records that cross layer boundaries and the bodies of the HTTP API."""
