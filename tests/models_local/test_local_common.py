"""Micro-batching, checkpoint lookup, option checks shared by the local backends."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Hashable
from pathlib import Path

import pytest
import torch

from titjudge.errors import ConfigError, ModelSpecError
from titjudge.models.local.batching import MicroBatcher
from titjudge.models.local.common import (
    check_params,
    release_model,
    resolve_checkpoint,
    resolve_device,
    resolve_dtype,
    with_torch_threads,
)
from titjudge.records.spec import parse_model_spec

SPEC = parse_model_spec("hf:some/model")


class Recorder:
    """A batch function that records what it was given and where it ran."""

    def __init__(self) -> None:
        self.calls: list[tuple[Hashable, list[int]]] = []
        self.threads: set[int] = set()

    def __call__(self, key: Hashable, items: list[int]) -> list[int | BaseException]:
        self.calls.append((key, list(items)))
        self.threads.add(threading.get_ident())
        return [ValueError(f"bad {i}") if i < 0 else i * 10 for i in items]


def test_concurrent_submits_become_batches_of_at_most_max_items() -> None:
    record = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(record, max_items=4, max_wait=0.01)

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in range(10)))

    assert asyncio.run(main()) == [i * 10 for i in range(10)]
    assert [items for _, items in record.calls] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batcher.batch_sizes == [4, 4, 2]
    assert threading.get_ident() not in record.threads  # never on the event loop's thread


def test_items_with_different_keys_never_share_a_batch() -> None:
    record = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(record, max_items=8, max_wait=0.01)

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i, key=i % 2) for i in range(6)))

    assert asyncio.run(main()) == [0, 10, 20, 30, 40, 50]
    assert record.calls == [(0, [0, 2, 4]), (1, [1, 3, 5])]


def test_item_error_fails_only_that_item() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(Recorder(), max_items=8, max_wait=0.01)

    async def main() -> list[int | BaseException]:
        return await asyncio.gather(
            *(batcher.submit(i) for i in (1, -2, 3)), return_exceptions=True
        )

    first, second, third = asyncio.run(main())
    assert (first, third) == (10, 30)
    assert isinstance(second, ValueError) and str(second) == "bad -2"


def test_batch_error_reaches_every_caller_and_batcher_keeps_working() -> None:
    calls = []

    def run(key: Hashable, items: list[int]) -> list[int | BaseException]:
        calls.append(items)
        if len(calls) == 1:
            raise RuntimeError("model exploded")
        return list(items)

    batcher: MicroBatcher[int, int] = MicroBatcher(run, max_items=8, max_wait=0.01)

    async def main() -> tuple[list[int | BaseException], int]:
        failed = await asyncio.gather(batcher.submit(1), batcher.submit(2), return_exceptions=True)
        return list(failed), await batcher.submit(7)

    failed, later = asyncio.run(main())
    assert [str(e) for e in failed] == ["model exploded", "model exploded"]
    assert later == 7


def test_cancelled_items_are_not_run() -> None:
    record = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(record, max_items=8, max_wait=0.05)

    async def main() -> int:
        doomed = asyncio.ensure_future(batcher.submit(99))
        kept = asyncio.ensure_future(batcher.submit(1))
        await asyncio.sleep(0)
        doomed.cancel()
        return await kept

    assert asyncio.run(main()) == 10
    assert [items for _, items in record.calls] == [[1]]


def test_batcher_survives_a_new_event_loop() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(Recorder(), max_items=2, max_wait=0.0)
    assert asyncio.run(batcher.submit(1)) == 10
    assert asyncio.run(batcher.submit(2)) == 20


def test_worker_thread_uses_the_builders_torch_thread_count() -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        wrapped = with_torch_threads(lambda: torch.get_num_threads())
    finally:
        torch.set_num_threads(before)

    async def main() -> int:
        return await asyncio.to_thread(wrapped)

    assert asyncio.run(main()) == 1


# --------------------------------------------------------------------------- checkpoints


class Weights:
    """A model's stand-in; `cyclic` makes it refer to itself, as a sentence-transformers model
    and its model card do."""

    def __init__(self, cyclic: bool) -> None:
        self.card = self if cyclic else None


class Backend:
    def __init__(self, model: Weights) -> None:
        self.model: Weights | None = model


@pytest.mark.parametrize("cyclic", [False, True])
def test_a_closed_model_is_freed_and_a_full_collection_runs_only_for_a_cycle(
    cyclic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    collections: list[object] = []
    real_collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collections.append(a) or real_collect(*a))
    gc.disable()  # only the collection release_model asks for may free the cycle
    try:
        backend = Backend(Weights(cyclic))
        model = weakref.ref(backend.model)
        release_model(backend, "model")
        assert backend.model is None
        assert model() is None  # freed now, not at some later collection
        assert len(collections) == (1 if cyclic else 0)
    finally:
        gc.enable()


def test_releasing_twice_or_a_model_never_loaded_is_harmless() -> None:
    backend = Backend(Weights(cyclic=False))
    release_model(backend, "model")
    release_model(backend, "model")
    assert backend.model is None


def test_missing_folder_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such-model"
    with pytest.raises(ModelSpecError, match=f"hf:{missing}: no model folder at {missing}"):
        resolve_checkpoint(parse_model_spec(f"hf:{missing}"))


def test_folder_without_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="has no config.json"):
        resolve_checkpoint(parse_model_spec(f"hf:{tmp_path}"))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ModelSpecError, match="is a file"):
        resolve_checkpoint(parse_model_spec(f"hf:{tmp_path / 'weights.bin'}"))


@pytest.mark.slow
def test_hub_ids_and_local_folders(qwen3_path: Path) -> None:
    local = resolve_checkpoint(parse_model_spec(f"hf:{qwen3_path}"))
    assert local.local and local.source == str(qwen3_path.resolve())
    hub = resolve_checkpoint(parse_model_spec("hf:Qwen/Qwen3-8B"), revision="main")
    assert (hub.local, hub.source, hub.revision) == (False, "Qwen/Qwen3-8B", "main")


# --------------------------------------------------------------------------- options


def test_check_params_rejects_unknown_and_mistyped_keys() -> None:
    allowed: dict[str, type | tuple[type, ...]] = {"enable_thinking": bool, "top_p": (int, float)}
    assert check_params(SPEC, {"enable_thinking": True, "top_p": 1}, allowed) == {
        "enable_thinking": True,
        "top_p": 1,
    }
    with pytest.raises(
        ConfigError,
        match="unknown params key 'enable_thinkng' \\(did you mean 'enable_thinking'\\?\\)",
    ):
        check_params(SPEC, {"enable_thinkng": True}, allowed)
    with pytest.raises(ConfigError, match="params.enable_thinking must be bool, got 'yes'"):
        check_params(SPEC, {"enable_thinking": "yes"}, allowed)
    with pytest.raises(ConfigError, match="params.top_p must be int/float, got True"):
        check_params(SPEC, {"top_p": True}, allowed)


def test_device_and_dtype_defaults_on_cpu() -> None:
    cpu = torch.device("cpu")
    assert resolve_device(SPEC, "cpu") == cpu
    assert resolve_dtype(SPEC, None, cpu) == torch.float32
    assert resolve_dtype(SPEC, "bf16", cpu) == torch.bfloat16
    assert resolve_dtype(SPEC, "float16", cpu) == torch.float16
    with pytest.raises(ConfigError, match="unknown dtype 'bfloat61'"):
        resolve_dtype(SPEC, "bfloat61", cpu)
    if not torch.cuda.is_available():
        assert resolve_device(SPEC, "auto").type in ("cpu", "mps")
        with pytest.raises(ConfigError, match="device 'cuda' requested but torch sees no CUDA GPU"):
            resolve_device(SPEC, "cuda")
    with pytest.raises(ConfigError, match="unknown device 'gpu0'"):
        resolve_device(SPEC, "gpu0")
