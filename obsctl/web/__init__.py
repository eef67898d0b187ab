"""HTTP API: a Flask app factory and one blueprint per area, calling the services."""
