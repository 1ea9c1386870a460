"""`dataset.json`: what a folder imported from a public preference set is (`titjudge data import
--preset`), written beside its manifest and read by every run of that manifest, so the run's
metrics say which set and which protocol their numbers follow, and whether the published
numbers on that set are comparable with them."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from titjudge.files import atomic_write, parse_record, read_json_object

DATASET_FILE = "dataset.json"


class PublicSet(BaseModel):
    """The set a run's data was imported from and the protocol its metrics follow."""

    model_config = ConfigDict(extra="allow")

    preset: str
    title: str
    source: str
    repo: str | None = None
    revision: str | None = None
    split: str
    #: how titjudge's pairwise accuracy counts on this set, in one sentence
    accuracy: str
    #: whether that is the protocol the set's published numbers follow
    comparable: bool
    published: list[str] = Field(default_factory=list)
    #: the number the set's papers publish, when it is not the pairwise accuracy
    #: (`metrics.protocols`): "inversion", "tie-aware", "ratings"; "pairwise" otherwise
    measure: str = "pairwise"

    @property
    def rated(self) -> bool:
        """Whether the set's measure reads its ratings.csv (each image's mean rating)."""
        return self.measure in ("ratings", "ratings-pairwise")

    def line(self) -> str:
        """What a run's report says under its numbers."""
        where = ", ".join(
            part
            for part in (
                f"split {self.split}",
                f"revision {self.revision}" if self.revision else "",
            )
            if part
        )
        number = (
            "the accuracy"
            if self.measure == "pairwise"
            else "the set's own number (the table below, each variant's `protocol`)"
        )
        same = (
            f"the published numbers on this set follow the same protocol as {number}"
            if self.comparable
            else f"the published numbers on this set follow their own protocol, so {number} "
            "is not theirs (DATASET.md beside the manifest says how)"
        )
        return f"data: {self.title} ({self.preset}; {where}): {self.accuracy}; {same}"

    @classmethod
    def beside(cls, manifest: Path) -> PublicSet | None:
        """The dataset.json in the manifest's folder; None when there is none."""
        path = manifest.parent / DATASET_FILE
        if not path.is_file():
            return None
        return parse_record(cls, read_json_object(path, "dataset file"), str(path), "dataset file")

    def write(self, folder: Path) -> Path:
        path = folder / DATASET_FILE
        atomic_write(path, self.model_dump_json(indent=2) + "\n")
        return path


__all__ = ["DATASET_FILE", "PublicSet"]
