"""A study that outlives its models: a run packed into one file (`pack`) whose numbers anyone
can re-derive on another machine with no key, no network and no cache (`reproduce`)."""
