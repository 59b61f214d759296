"""Built-in estimators (plugins registered on import)."""
