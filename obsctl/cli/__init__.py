"""Command-line interface: Typer apps that parse arguments, call a service and render."""
