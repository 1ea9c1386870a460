"""From a run's numbers to findings: its records as pandas frames (`frames`), breakdowns
by prompt length, T2I model and checklist element type (`breakdown`), several runs side
by side (`compare`), the frames written out (`export`). Every pair outcome comes from
`metrics.outcomes` and every number from `metrics.summary.metrics_record`, as metrics.json's do;
pandas is imported only when a frame is asked for."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
