"""Batch mode's driver: a run's cache misses of `batch: true` models answered by the
providers' batch jobs. `collect` drives the rounds (the probe that queues misses, the
re-asks), `jobs` splits, submits, polls and resumes jobs, `ledger` records them in the cache
dir so a killed run pays nothing twice, `progress` reports them. What the clients below need
of batch mode sits beside them: a job's replies read back into the calls that asked
(`models.calls.batch_answers`) and the run's budget over the lines (`models.calls.batch_spend`)."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
