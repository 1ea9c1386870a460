"""The workbench app served from a daemon thread on 127.0.0.1, for its tests."""

from __future__ import annotations

from pathlib import Path


class WorkbenchServer:
    """The real app (`workbench.server.make_app`) served from a daemon thread on 127.0.0.1."""

    def __init__(self, root: Path, token: str | None = None, votes: Path | None = None):
        from doubles.loopback import LoopbackThread

        from titjudge.workbench.catalog import Catalog
        from titjudge.workbench.server import make_app

        catalog = Catalog.find(root)

        class Thread(LoopbackThread):
            thread_name = "workbench"

            def __init__(self) -> None:
                self._thread = None
                self._loop = None
                self.port = 0

            async def astart(self) -> str:
                self.port = await self.serve(make_app(catalog, token, votes))
                return self.url

            @property
            def url(self) -> str:
                return f"http://127.0.0.1:{self.port}"

        self.thread = Thread()
        self.catalog = catalog

    def __enter__(self) -> WorkbenchServer:
        self.url = self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.stop()


def run_scores(run: Path) -> dict[str, float | None]:
    """Each item's score in the run (its one judge), from items.jsonl alone."""
    import json

    scores = {}
    for line in (run / "items.jsonl").read_text().splitlines():
        row = json.loads(line)
        scores[row["item_id"]] = row["score"]
    return scores


def human_rows(run: Path) -> list[dict[str, str]]:
    """The rows of the human pairs file the run's config.yaml names, as the file has them
    (read here without titjudge: the tests' own reading of the run's inputs)."""
    import csv

    config = (run / "config.yaml").read_text()
    pairs_file = next(
        Path(line.split(":", 1)[1].strip().strip("'\""))
        for line in config.splitlines()
        if line.strip().startswith("human_pairs:")
    )
    with pairs_file.open(newline="") as handle:
        return list(csv.DictReader(handle))
