"""obsctl: observability for LLM agents, from the terminal and over HTTP."""

__version__ = "0.1.0"
