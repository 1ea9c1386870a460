"""Run configuration: the schema (`schema`), and loading with overrides (`load`)."""
