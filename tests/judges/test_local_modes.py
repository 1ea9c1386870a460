"""score_mode expected and lmm_yes on tiny local checkpoints, loaded through the real hf: loader.

The expected-mode judge is a tiny Qwen3 fine-tuned for a few seconds to answer the test's
question with `{"rationale": "fits", "score": 6}` or `... 8}` equally often, so its score
token carries a real two-way distribution. Both judges' scores are checked against the
model's own logits, computed here by an independent forward pass.
"""

import asyncio
import math
from types import SimpleNamespace

import pytest
import torch
from doubles.tiny_models import build_tiny_qwen3, build_tiny_qwen25_vl
from judge_helpers import manifest

from titjudge.cache.store import CallCache
from titjudge.config.schema import DescriberConfig
from titjudge.judges.llm import LLMJudgeConfig
from titjudge.judges.lmm_yes import LMMYesJudgeConfig, answer_side
from titjudge.judges.registry import build_judge
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.hub import ModelHub
from titjudge.models.local.hf_generate import decode_images, render_prompt
from titjudge.prompts.loader import load_template
from titjudge.records.image_input import ImageInput
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeInput

# tiny local models, built and run on the CPU
pytestmark = pytest.mark.slow

PROMPT = "a red cat sitting on a woven mat near a wooden door"
DESCRIPTION = "a small red cat sits on a mat in warm light"
ANSWERS = ('{"rationale": "fits", "score": 6}', '{"rationale": "fits", "score": 8}')


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def judge_request() -> GenerateRequest:
    system, user = load_template("judge_expected").render(prompt=PROMPT, description=DESCRIPTION)
    return GenerateRequest(prompt=user, system=system)


def train_to_answer(path) -> tuple[list[int], list[int]]:
    """Fine-tune the tiny judge until greedy decoding gives one of ANSWERS; returns the prompt
    ids and the answer ids before the score digit."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    engine = SimpleNamespace(processor=None, tokenizer=tokenizer, enable_thinking=False)
    prompt_ids = tokenizer(render_prompt(engine, judge_request()), add_special_tokens=False)[
        "input_ids"
    ]
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    rows = [
        prompt_ids + tokenizer(a, add_special_tokens=False)["input_ids"] + [end] for a in ANSWERS
    ]
    inputs = torch.tensor(rows)
    labels = inputs.clone()
    labels[:, : len(prompt_ids)] = -100
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    torch.manual_seed(0)
    model.train()
    for _ in range(300):
        loss = model(input_ids=inputs, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if loss.item() < 0.04:  # the floor is ln 2 / answer tokens: the digit stays a coin flip
            break
    model.eval().save_pretrained(path)
    head = tokenizer(ANSWERS[0].rsplit(" ", 1)[0] + " ", add_special_tokens=False)["input_ids"]
    return prompt_ids, head


def test_expected_score_matches_the_models_own_logits(tmp_path):
    path = build_tiny_qwen3(tmp_path / "judge")
    prompt_ids, head = train_to_answer(path)
    hub = ModelHub(CallCache(tmp_path / "cache"))
    config = LLMJudgeConfig(
        name="exp",
        kind="llm",
        model=f"hf:{path}",
        score_mode="expected",
        max_tokens=32,
        device="cpu",
        # the answer it was trained to give has JSON spacing the grammar would not allow:
        # decoded freely, its score position is the one the logits below are read at
        structured_output="prompt",
    )
    describer = DescriberConfig(model=f"hf:{path}")
    judge = build_judge(config, describer.model, describer, hub)
    item = Item("i1", "p1", PROMPT, tmp_path / "none.png", "m")
    outcome = asyncio.run(
        judge.judge(JudgeInput(item, None, Described(text=DESCRIPTION)), probe=SEND)
    )
    assert outcome.status == "ok", outcome.error
    assert outcome.details["sampled_score"] in (6, 8) and outcome.details["score_tokens"] == 1

    model, tokenizer = (
        judge.client.backend.real.engine.model,
        judge.client.backend.real.engine.tokenizer,
    )
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([prompt_ids + head])).logits[0, -1].float()
    values, ids = torch.log_softmax(logits, -1).topk(20)
    probs = {}
    for value, token_id in zip(values.tolist(), ids.tolist(), strict=True):
        piece = tokenizer.decode([token_id]).strip()
        if piece.isdigit() and 1 <= int(piece) <= 9:
            probs[int(piece)] = probs.get(int(piece), 0.0) + math.exp(value)
    assert probs[6] > 0.3 and probs[8] > 0.3  # a real two-way distribution over the score
    expected = sum(v * p for v, p in probs.items()) / sum(probs.values())
    assert outcome.score == pytest.approx(expected, abs=1e-4)
    assert 6 < outcome.score < 8 and outcome.score != outcome.details["sampled_score"]


def test_lmm_yes_matches_the_vlms_own_logits(tmp_path, synth_data):
    path = build_tiny_qwen25_vl(tmp_path / "vlm")
    row = manifest(synth_data)[0]
    image = ImageInput.from_path(synth_data / row["image"])
    hub = ModelHub(CallCache(tmp_path / "cache"))
    config = LMMYesJudgeConfig(
        name="yes", kind="lmm_yes", model=f"hf:{path}", top_logprobs=5000, device="cpu"
    )
    describer = DescriberConfig(model=f"hf:{path}")
    judge = build_judge(config, describer.model, describer, hub)
    item = Item(
        row["item_id"], row["prompt_id"], row["prompt"], synth_data / row["image"], row["t2i_model"]
    )
    outcome = asyncio.run(judge.judge(JudgeInput(item, image, Described(text=None)), probe=SEND))
    assert outcome.status == "ok", outcome.error
    assert outcome.details["answer_position"] == 0

    engine = judge.client.backend.real.engine
    system, user = load_template("lmm_yes").render(prompt=row["prompt"])
    request = GenerateRequest(prompt=user, system=system, images=(image,))
    encoded = engine.processor(
        text=[render_prompt(engine, request)],
        images=decode_images(request),
        padding=True,
        return_tensors="pt",
        add_special_tokens=False,
    )
    with torch.inference_mode():
        logits = engine.model(**encoded).logits[0, -1].float()
    logp = torch.log_softmax(logits, -1)
    mass = {"yes": 0.0, "no": 0.0}
    for token_id, value in enumerate(logp.tolist()):
        side = answer_side(engine.tokenizer.decode([token_id]))
        if side is not None:
            mass[side] += math.exp(value)
    assert mass["yes"] > 0 and mass["no"] > 0
    assert outcome.details["p_yes"] == pytest.approx(mass["yes"], rel=1e-3)
    assert outcome.score == pytest.approx(mass["yes"] / (mass["yes"] + mass["no"]), abs=1e-4)
