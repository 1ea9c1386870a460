import dataclasses

from titjudge.models.calls.keys import embedding_key, generation_key
from titjudge.models.core.base import GenerateRequest
from titjudge.records.image_input import ImageInput
from titjudge.records.spec import parse_model_spec

SPEC = parse_model_spec("litellm:openai/gpt-4o")
IMAGE = ImageInput(data=b"\x89PNG fake bytes")
REQ = GenerateRequest(prompt="Describe.", images=(IMAGE,), max_tokens=512, temperature=0.0)
TEMPLATE = {"name": "describe_paper", "version": "1", "sha256": "abc"}


def key(**changes):
    spec = changes.pop("spec", SPEC)
    template = changes.pop("template", TEMPLATE)
    params = changes.pop("params", None)
    return generation_key(
        spec, dataclasses.replace(REQ, **changes), template=template, params=params
    )


def test_output_changing_inputs_change_the_key():
    base = key()
    assert key(prompt="Describe!") != base
    assert key(images=(ImageInput(data=b"\x89PNG other bytes"),)) != base
    assert key(temperature=0.7) != base
    assert key(max_tokens=768) != base
    assert key(sample=1) != base
    assert key(json_schema={"type": "object"}) != base
    assert key(spec=parse_model_spec("litellm:openai/gpt-4o-mini")) != base
    assert key(template={**TEMPLATE, "version": "2"}) != base
    assert key(params={"reasoning_effort": "low"}) != base


def test_same_bytes_from_another_path_hit():
    moved = ImageInput(data=IMAGE.data, mime="image/png", path=None)
    assert key(images=(moved,)) == key()


def test_embedding_key_depends_on_text_and_model():
    spec = parse_model_spec("embed:Qwen/Qwen3-Embedding-8B")
    assert embedding_key(spec, "a") == embedding_key(spec, "a")
    assert embedding_key(spec, "a") != embedding_key(spec, "b")
    assert embedding_key(spec, "a") != embedding_key(
        parse_model_spec("embed:Qwen/Qwen3-Embedding-4B"), "a"
    )
