"""`titjudge annotate`: collect pairwise human preferences in the browser.

`session` holds the pairs, each annotator's order and the votes file (no web library);
`server` is the aiohttp app (the `[annotate]` extra), imported only when a server starts;
`status` counts answers and the agreement on shared pairs for `--status` and the status page.
"""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
