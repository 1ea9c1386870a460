"""Where a public set's files are: a local folder laid out as the Hugging Face hub serves the
dataset, or `hf:<owner>/<name>[@revision]` resolved in the local Hugging Face cache.

Nothing is downloaded: a set can be hundreds of gigabytes, so an `hf:` source that is not in
the cache is one line naming the command that fetches it (`hf download`, huggingface_hub's
CLI). The cache is read through `huggingface_hub.snapshot_download(local_files_only=True)`,
which honours `HF_HUB_CACHE` / `HF_HOME` as every hub tool does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from titjudge.errors import DataError, install_hint

_HF = re.compile(r"^hf:(?P<repo>[A-Za-z0-9][\w.\-]*/[\w.\-]+)(?:@(?P<revision>[\w.\-/]+))?$")


@dataclass(frozen=True)
class Snapshot:
    """A set's files on this machine: the folder, what it was named by, and the hub revision
    (the commit the cache holds; None for a local folder)."""

    folder: Path
    source: str
    repo: str | None = None
    revision: str | None = None


def resolve_source(source: str) -> Snapshot:
    """The snapshot `source` names; a DataError in one line when it is not here."""
    found = _HF.match(source)
    if found is None:
        if source.startswith("hf:"):
            raise DataError(f"{source}: an hf: source is hf:<owner>/<name>[@revision]")
        folder = Path(source)
        if not folder.is_dir():
            raise DataError(f"{source}: no such folder (a dataset snapshot, or hf:<owner>/<name>)")
        return Snapshot(folder, source)
    repo, revision = found["repo"], found["revision"]
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        raise DataError(
            f"{source}: reading the Hugging Face cache needs huggingface_hub; install it with: "
            f"{install_hint('datasets')}"
        ) from None
    try:
        folder = Path(
            snapshot_download(
                repo,
                repo_type="dataset",
                revision=revision,
                cache_dir=_hub_cache(),
                local_files_only=True,
            )
        )
    except LocalEntryNotFoundError:
        at = f" --revision {revision}" if revision else ""
        raise DataError(
            f"{source}: not in the local Hugging Face cache; download it first with: "
            f"hf download {repo} --repo-type dataset{at}"
        ) from None
    return Snapshot(folder, source, repo, folder.name)


def _hub_cache() -> str | None:
    """The hub cache as the environment names it now (`HF_HUB_CACHE`, else `HF_HOME`/hub);
    None: huggingface_hub's default. Read at each call: the library reads the variables once,
    when it is first imported."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    return None


__all__ = ["Snapshot", "resolve_source"]
