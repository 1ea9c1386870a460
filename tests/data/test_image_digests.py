"""An image file loaded once is remembered by its identity (path, size, inode, times), so a
re-run keys its calls without reading it; a deferred image reads its bytes only when sent,
and refuses bytes that no longer match the hash it was keyed by."""

import asyncio
import os
import pickle
from pathlib import Path

import pytest
from PIL import Image

from titjudge.cache.store import FACTS_FILE, CallCache
from titjudge.data.image_digests import identity
from titjudge.data.images import ImageLoader
from titjudge.errors import DataError


class Facts:
    """A dict-backed `MetaStore`, counting what is asked of it."""

    def __init__(self):
        self.saved: dict = {}

    def get_meta(self, key):
        return self.saved.get(key)

    def set_meta(self, key, value):
        self.saved[key] = value


def _png(path: Path, colour: tuple[int, int, int], size=(40, 30)) -> Path:
    Image.new("RGB", size, colour).save(path)
    return path


def _load(loader: ImageLoader, path: Path):
    return asyncio.run(loader.load(path))


def test_a_second_load_of_an_unchanged_file_is_deferred_with_the_same_hash(tmp_path):
    path = _png(tmp_path / "a.png", (200, 10, 10))
    loader = ImageLoader(2, known=Facts())
    first = _load(loader, path)
    again = _load(loader, path)
    assert first.loaded and not again.loaded
    assert (again.sha256, again.mime, again.size) == (first.sha256, "image/png", (40, 30))
    assert again == first
    with pytest.raises(RuntimeError, match="before load"):
        again.data  # noqa: B018 - a deferred image's bytes are an error until loaded
    with pytest.raises(RuntimeError, match="before load"):
        pickle.dumps(again)  # never shipped (to a Ray actor) without its bytes
    assert asyncio.run(again.load()).data == first.data
    assert pickle.loads(pickle.dumps(again)) == first


def test_a_changed_file_is_read_again(tmp_path):
    path = _png(tmp_path / "a.png", (200, 10, 10))
    loader = ImageLoader(2, known=Facts())
    first = _load(loader, path)
    _png(path, (10, 200, 10))
    changed = _load(loader, path)
    assert changed.loaded and changed.sha256 != first.sha256


def test_bytes_that_changed_after_keying_are_refused(tmp_path):
    path = _png(tmp_path / "a.png", (200, 10, 10))
    loader = ImageLoader(2, known=Facts())
    _load(loader, path)
    deferred = loader.peek(path)
    assert deferred is not None and not deferred.loaded
    _png(path, (10, 10, 200))  # rewritten between keying and sending
    with pytest.raises(DataError, match="changed while the run used it"):
        asyncio.run(deferred.load())


def test_without_a_store_nothing_is_remembered_and_missing_files_say_so(tmp_path):
    path = _png(tmp_path / "a.png", (200, 10, 10))
    loader = ImageLoader(2)
    assert _load(loader, path).loaded and _load(loader, path).loaded
    assert loader.peek(path) is None
    remembering = ImageLoader(2, known=Facts())
    with pytest.raises(DataError, match="not found"):
        _load(remembering, tmp_path / "missing.png")
    assert remembering.peek(tmp_path / "missing.png") is None


def test_the_identity_changes_with_any_write(tmp_path):
    path = _png(tmp_path / "a.png", (200, 10, 10))
    before = identity(path)
    stat = path.stat()
    path.write_bytes(path.read_bytes())  # same bytes, same size: a write all the same
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with the old mtime put back
    assert identity(path) != before
    assert identity(tmp_path / "missing.png") is None


def test_facts_live_in_the_cache_dir_but_are_not_answers(tmp_path):
    cache = CallCache(tmp_path / "cache")
    path = _png(tmp_path / "a.png", (200, 10, 10))
    _load(ImageLoader(2, known=cache), path)
    assert cache.entries() == 0 and cache.models() == {}
    reopened = CallCache(tmp_path / "cache")
    assert not _load(ImageLoader(2, known=reopened), path).loaded
    # a cut or foreign line is skipped, not an error; clearing the cache forgets the facts
    with (tmp_path / "cache" / FACTS_FILE).open("a") as handle:
        handle.write('{"key": "image:x", "val\nnot json\n')
    assert not _load(ImageLoader(2, known=CallCache(tmp_path / "cache")), path).loaded
    cache.clear()
    assert not (tmp_path / "cache" / FACTS_FILE).exists()
    assert _load(ImageLoader(2, known=CallCache(tmp_path / "cache")), path).loaded


def test_a_fact_that_cannot_be_written_costs_only_a_read_next_time(tmp_path):
    cache = CallCache(tmp_path / "cache")
    (tmp_path / "cache" / FACTS_FILE).mkdir()  # writing the facts file fails (EISDIR)
    path = _png(tmp_path / "a.png", (200, 10, 10))
    loader = ImageLoader(2, known=cache)
    assert _load(loader, path).loaded
    assert not _load(loader, path).loaded  # remembered for this run all the same
    assert _load(ImageLoader(2, known=CallCache(tmp_path / "cache")), path).loaded


def test_two_calls_sending_one_deferred_image_read_it_once(tmp_path):
    path = _png(tmp_path / "a.png", (200, 10, 10))
    loader = ImageLoader(2, known=Facts())
    _load(loader, path)
    deferred = loader.peek(path)
    reads = []
    real = loader._read

    async def counted(where):
        reads.append(where)
        return await real(where)

    loader._read = counted

    async def both():
        return await asyncio.gather(deferred.load(), deferred.load())

    first, second = asyncio.run(both())
    assert first is second is deferred and deferred.loaded and len(reads) == 1
