"""What an earlier run learnt about an image file, so that a re-run need not read it again.

Loading an image (reading, decoding, normalising: `data.images.load_image`) yields the hash
that keys every call about it. A run remembers, per file, that hash, the image's type and
pixel size, under the file's identity: its absolute path, size, inode, and modification and
change times in nanoseconds (what git's index trusts to tell a changed file). Any write to
the file changes its change time, so an entry is never found for changed content; a file
whose times are merely touched is read again once. The loader's normalisation (its side
bound) and Pillow's version are part of the entry's key: either changing re-reads images.

Entries live beside the answers in the run's cache dir (`CallCache.get_meta`); a run with
no cache dir remembers them for itself only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Protocol

from titjudge.errors import DataError
from titjudge.records.images import MAX_SIDE, PIL_VERSION
from titjudge.user_files import stat_user_file

#: bump when what `load_image` makes of a file changes
LOADER_VERSION = 1


class MetaStore(Protocol):
    """Where the entries are kept (`titjudge.cache.store.CallCache`)."""

    def get_meta(self, key: str) -> Any | None: ...

    def set_meta(self, key: str, value: Any) -> None: ...


def identity(path: str | Path) -> str | None:
    """The file's identity as a key, or None when it cannot be read (`load_image` says why)."""
    try:
        path = os.path.abspath(path)
        st = stat_user_file(path)  # bounded: a hung mount does not hold the caller
    except (OSError, ValueError, DataError):
        return None
    if not stat.S_ISREG(st.st_mode):  # a FIFO, a folder: never remembered, `load_image` says why
        return None
    return (
        f"image:{LOADER_VERSION}:{MAX_SIDE}:{PIL_VERSION}:{path}:"
        f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    )


__all__ = ["LOADER_VERSION", "MetaStore", "identity"]
