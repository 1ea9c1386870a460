"""The call cache: keys, store, stats, clearing."""
