"""Offline stand-ins for tests, benchmarks and examples: tiny checkpoints, a loopback model server."""
