"""Public human-preference sets imported as titjudge data (`titjudge data import SOURCE
--preset NAME --out DIR`): a hub snapshot's shards streamed row by row, each set's own
schema and protocol in its preset (`presets`)."""
