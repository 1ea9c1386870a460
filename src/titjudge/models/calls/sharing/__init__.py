"""How one answer is shared instead of asked twice, unit by unit, in the order the call
pipeline (`models.calls.pipeline`) consults them: within a call and across the calls of this
process while it is in flight (`dedup`), within a run once it is known (`run_answers`: a batch
job's answer, a failure of this run), and across processes on one cache dir (`claims`)."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
