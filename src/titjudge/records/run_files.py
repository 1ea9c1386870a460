"""The files a run wrote, each with its size and sha256: what files.json holds, the last file
a run writes (`report.run_files`), so a run dir proves itself to every reader.

files.json cannot hold its own hash (writing it would change it), so it holds the sha256 of
its own listing instead (`listing_sha256`, over the canonical JSON of `files`): a listing
changed by hand or by a bad disk is told apart from a listed file that changed. The record of
a run holds it (`records.run_record.RunRecord.files`), never written to metrics.json.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field

#: the name of the file list in a run dir (an ablation grid's dir holds one too)
FILES_NAME = "files.json"
#: the format of files.json this titjudge writes and reads (1: the first)
FILES_FORMAT = 1


class FileDigest(BaseModel):
    """One file as the run wrote it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int = Field(ge=0, description="bytes")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="hex digest of its bytes")


def listing_digest(files: dict[str, FileDigest]) -> str:
    """The sha256 of a listing: its entries as canonical JSON (keys sorted, no spaces)."""
    doc = {name: digest.model_dump() for name, digest in files.items()}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class RunFiles(BaseModel):
    """Every file of a run dir but files.json itself, by its path relative to the dir (`/`
    between folders; a folder holding a files.json of its own, an ablation row, is left to
    it), with its size and sha256."""

    model_config = ConfigDict(extra="forbid")

    format: int = FILES_FORMAT
    files: dict[str, FileDigest] = Field(default_factory=dict)
    #: `listing_digest(files)`: how files.json proves itself
    listing_sha256: str = ""

    @classmethod
    def of(cls, files: dict[str, FileDigest]) -> RunFiles:
        """A listing with its own digest."""
        ordered = dict(sorted(files.items()))
        return cls(files=ordered, listing_sha256=listing_digest(ordered))

    @property
    def proves_itself(self) -> bool:
        """Whether the listing is the one its digest was taken of."""
        return self.listing_sha256 == listing_digest(self.files)


__all__ = ["FILES_FORMAT", "FILES_NAME", "FileDigest", "RunFiles", "listing_digest"]
