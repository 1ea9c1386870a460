"""What a provider's batch API must offer titjudge (`batch: true`), whatever the provider.

A backend that can send its requests as batch jobs returns a `BatchAPI` from
`TextBackend.batch_api()`; the call layer's collector (`models.calls.batch.collect`) drives it: it
builds each line's body from the request the online call would send, uploads the lines,
creates a job, polls it and reads each line's reply back as a `Generation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from titjudge.models.core.base import GenerateRequest, Generation

#: the providers whose batch API titjudge drives (a `litellm:` model's provider prefix)
BATCH_PROVIDERS = ("openai", "azure", "anthropic", "gemini", "vertex_ai")
#: the providers whose batch API titjudge drives for embeddings too (OpenAI's takes
#: `/v1/embeddings`; Azure's batch API takes no embeddings model, per its batch FAQ)
BATCH_EMBEDDING_PROVIDERS = ("openai",)

#: a job's states that end it (OpenAI's Batch object `status`)
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass
class JobState:
    """A batch job as the provider reports it."""

    status: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    #: the job's own errors (a failed validation), as one line of text
    errors: str | None = None

    @property
    def done(self) -> bool:
        return self.status in TERMINAL


@dataclass
class Embedded:
    """An embeddings line's reply: one vector per text of the line's `input`, in order."""

    vectors: list[list[float]]
    #: the model the reply names (None where it names none)
    model: str | None = None
    #: the line's price at the batch rates (None where nothing prices the model)
    cost: float | None = None


@dataclass
class LineResult:
    """One line of a job's output or error file: a reply, or the provider's reason."""

    custom_id: str
    generation: Generation | None = None
    error: str | None = None
    #: an embeddings line's reply (where the job's endpoint is embeddings)
    embedded: Embedded | None = None
    #: the request was never run (the job expired or was cancelled first): send it again
    unfinished: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class BatchAPI(Protocol):
    """One provider's files and batches endpoints, for one model."""

    #: the provider's documented limits per job: requests, and bytes of the input file
    max_requests: int
    max_bytes: int
    #: True: the lines are uploaded as a file first (`upload`), and the job reads it; False:
    #: the provider takes the requests inline when the job is created (Anthropic), and
    #: `create` gets the lines themselves (rebuilt from the bodies when a killed run resumes)
    uploads: bool

    def provider(self) -> str: ...

    def body(self, request: GenerateRequest) -> dict[str, Any]:
        """The JSON body the online call would send for `request` (its images loaded)."""
        ...

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """One line of the job's input file."""
        ...

    async def upload(self, data: bytes, name: str) -> str:
        """Upload an input file (JSONL, one `line` each); its id."""
        ...

    async def create(self, file_id: str | None, data: bytes, metadata: dict[str, str]) -> str:
        """Create a job reading the uploaded `file_id` (or, where `uploads` is False, the
        lines in `data` themselves), tagged with `metadata` where the provider keeps it; its
        id."""
        ...

    async def find(self, metadata: dict[str, str], since: float, lines: int) -> str | None:
        """The id of a job this run may already have created: one tagged `metadata`, or,
        where the provider keeps no tag, one of `lines` requests created after `since` (a
        unix time), if the provider lists one. A run killed while creating a job asks this
        before creating it again."""
        ...

    async def retrieve(self, job_id: str) -> JobState: ...

    async def results(self, state: JobState) -> list[dict[str, Any]]:
        """Every row of the job's results, as the provider wrote it, each with the
        `custom_id` of its line under that key (added where the provider names it otherwise)."""
        ...

    def parse(self, row: dict[str, Any]) -> LineResult:
        """One row as a reply or a failure with the provider's reason."""
        ...


__all__ = [
    "BATCH_EMBEDDING_PROVIDERS",
    "BATCH_PROVIDERS",
    "TERMINAL",
    "BatchAPI",
    "Embedded",
    "JobState",
    "LineResult",
]
