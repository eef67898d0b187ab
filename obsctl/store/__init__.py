"""Storage: every SQL statement of obsctl lives in this package."""
