"""Tiny offline checkpoints, built once per test session, and backends loaded from them."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from doubles.tiny_models import (
    build_tiny_qwen3,
    build_tiny_qwen3_embedding,
    build_tiny_qwen25_vl,
    build_tiny_sentence_transformer,
)
from PIL import Image

from titjudge.models.core.base import EmbeddingBackend, TextBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.registry import build_embedding_backend, build_text_backend
from titjudge.records.image_input import ImageInput


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread() -> Iterator[None]:
    """Tiny models are fastest single-threaded; oversubscribed OpenMP threads on a busy
    2-core box make each op many times slower. Restored after each module."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def qwen3_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny-qwen3"))


@pytest.fixture(scope="session")
def vl_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen25_vl(tmp_path_factory.mktemp("tiny-qwen25-vl"))


@pytest.fixture(scope="session")
def qwen3_embedding_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen3_embedding(tmp_path_factory.mktemp("tiny-qwen3-embedding"))


@pytest.fixture(scope="session")
def st_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_sentence_transformer(tmp_path_factory.mktemp("tiny-sentence-transformer"))


@pytest.fixture(scope="session")
def qwen3_backend(qwen3_path: Path) -> TextBackend:
    return build_text_backend(f"hf:{qwen3_path}", ModelOptions(batch_size=4))


@pytest.fixture(scope="session")
def vl_backend(vl_path: Path) -> TextBackend:
    return build_text_backend(f"hf:{vl_path}", ModelOptions(batch_size=4))


@pytest.fixture(scope="session")
def qwen3_embedder(qwen3_embedding_path: Path) -> EmbeddingBackend:
    return build_embedding_backend(f"embed:{qwen3_embedding_path}", ModelOptions(batch_size=4))


@pytest.fixture(scope="session")
def st_embedder(st_path: Path) -> EmbeddingBackend:
    return build_embedding_backend(f"embed:{st_path}", ModelOptions(batch_size=4))


@pytest.fixture(scope="session")
def make_png() -> Callable[[int, int, tuple[int, int, int]], ImageInput]:
    """A real PNG (two colour bands, so the image is not flat) as an ImageInput."""

    def make(width: int, height: int, colour: tuple[int, int, int]) -> ImageInput:
        image = Image.new("RGB", (width, height), colour)
        image.paste((255 - colour[0], 255 - colour[1], 255 - colour[2]), (0, 0, width // 2, height))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return ImageInput(data=buffer.getvalue())

    return make
