"""The synthetic benchmark: files, determinism, and that images/texts/votes follow the truth."""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy.stats import spearmanr

from titjudge.data.manifest import load_manifest
from titjudge.data.pairs import load_pairs, load_ranks, load_votes_with_lines
from titjudge.data.synth.benchmark import SynthResult, synthesize
from titjudge.data.synth.draw import draw_rendering, png_bytes
from titjudge.data.synth.scene import Rendering, Scene, Subject, sample_scene
from titjudge.data.synth.text import describe_rendering
from titjudge.data.synth.vocab import COLOURS, NEUTRAL_COMPOSITION
from titjudge.errors import DataError

N_PROMPTS, N_MODELS = 6, 5


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> SynthResult:
    return synthesize(
        tmp_path_factory.mktemp("bench") / "out",
        N_PROMPTS,
        N_MODELS,
        seed=3,
        image_size=64,
        workers=1,
    )


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_files_and_shapes(bench: SynthResult) -> None:
    out = bench.out
    n_items, n_pairs = N_PROMPTS * N_MODELS, N_PROMPTS * N_MODELS * (N_MODELS - 1) // 2
    items = load_manifest(out / "manifest.jsonl")
    assert len(items) == n_items
    assert (
        items[0].item_id == "p0001__synth-model-01" and items[-1].item_id == "p0006__synth-model-05"
    )
    assert items[0].image == out / "images" / "synth-model-01" / "p0001.png"
    assert Image.open(items[0].image).size == (64, 64)
    votes = [vote for _, vote in load_votes_with_lines(out / "votes.csv", panel_size=15)]
    assert len(votes) == n_pairs and all(len(v.experts) == 3 for v in votes)
    pairs = load_pairs(out / "pairs.csv", {i.item_id: i for i in items})
    assert len(pairs) == n_pairs  # experts vote on every pair, so nothing is unresolved
    assert len(load_ranks(out / "ranks.csv")) == n_items
    truth = list(csv.DictReader((out / "truth.csv").open()))
    assert len(truth) == n_items and 0.0 <= float(truth[0]["quality"]) <= 1.0
    text = (out / "SYNTHETIC.md").read_text()
    assert "SYNTHETIC BENCHMARK - NOT REAL DATA" in text and "- seed: 3" in text
    assert len((out / "elements.jsonl").read_text().splitlines()) == n_items


def test_descriptions_are_keyed_by_image_hash(bench: SynthResult) -> None:
    records = [json.loads(x) for x in (bench.out / "descriptions.jsonl").read_text().splitlines()]
    assert len(records) == N_PROMPTS * N_MODELS
    for record in records:
        data = (bench.out / record["image"]).read_bytes()
        assert record["image_sha256"] == hashlib.sha256(data).hexdigest()
    assert len({r["image_sha256"] for r in records}) == len(records)  # every image differs


def test_prompt_and_description_lengths(bench: SynthResult) -> None:
    prompts = {item.prompt_id: item.prompt for item in bench.items}
    assert len(set(prompts.values())) == N_PROMPTS
    assert all(200 <= len(p.split()) <= 290 for p in prompts.values())
    records = [json.loads(x) for x in (bench.out / "descriptions.jsonl").read_text().splitlines()]
    for record, item in zip(records, bench.items, strict=True):
        words = record["description"].split()
        assert 150 <= len(words) <= 300
        prompt_trigrams = set(zip(*(item.prompt.split()[k:] for k in range(3)), strict=False))
        desc_trigrams = set(zip(*(words[k:] for k in range(3)), strict=False))
        assert len(desc_trigrams & prompt_trigrams) < 0.2 * len(desc_trigrams)  # not a copy


@pytest.mark.slow
def test_same_seed_gives_identical_bytes_even_in_parallel(
    bench: SynthResult, tmp_path: Path
) -> None:
    again = synthesize(tmp_path / "again", N_PROMPTS, N_MODELS, seed=3, image_size=64, workers=2)
    assert tree(again.out) == tree(bench.out)
    other = synthesize(tmp_path / "other", N_PROMPTS, N_MODELS, seed=4, image_size=64, workers=1)
    assert (other.out / "manifest.jsonl").read_bytes() != (
        bench.out / "manifest.jsonl"
    ).read_bytes()
    assert (other.out / "votes.csv").read_bytes() != (bench.out / "votes.csv").read_bytes()


def test_regenerating_in_place_and_refusing_foreign_folders(
    bench: SynthResult, tmp_path: Path
) -> None:
    out = tmp_path / "b"
    synthesize(out, 2, 3, seed=1, image_size=32)
    synthesize(out, 1, 2, seed=1, image_size=32)  # an earlier synthetic benchmark may be replaced
    assert sorted(p.name for p in (out / "images").iterdir()) == [
        "synth-model-01",
        "synth-model-02",
    ]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(DataError, match="not empty and is not a synthetic benchmark"):
        synthesize(foreign, 1, 2)
    with pytest.raises(DataError, match="--models must be at least 2"):
        synthesize(tmp_path / "x", 1, 1)


@pytest.mark.slow
def test_quality_follows_skill_and_human_ranks_follow_quality(tmp_path: Path) -> None:
    result = synthesize(tmp_path / "q", 30, 6, seed=11, image_size=32, workers=1)
    rows = list(csv.DictReader((result.out / "truth.csv").open()))
    quality = {r["item_id"]: float(r["quality"]) for r in rows}
    by_model: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by_model[r["t2i_model"]].append(float(r["quality"]))
    skills = {m.name: m.skill for m in result.models}
    names = sorted(by_model)
    rho = spearmanr([skills[n] for n in names], [np.mean(by_model[n]) for n in names]).statistic
    assert rho >= 0.9
    per_prompt: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in load_ranks(result.out / "ranks.csv"):
        per_prompt[row.prompt_id].append((row.rank, quality[row.item_id]))
    rhos = [spearmanr(*zip(*v, strict=True)).statistic for v in per_prompt.values()]
    assert np.nanmean(rhos) <= -0.7  # rank 1 = best = highest latent quality
    non_tie = [p for p in result.aggregation.pairs if p.winner != "tie"]
    agree = [(quality[p.item_a] > quality[p.item_b]) == (p.winner == "a") for p in non_tie]
    assert np.mean(agree) >= 0.85


# --------------------------------------------------------------------------- renderings


def scene_with(kind: str) -> Scene:
    for k in range(500):
        scene = sample_scene(random.Random(f"s{k}"), "p1")
        if any(rel.kind == kind for rel in scene.relations):
            return scene
    raise AssertionError(f"no scene with a {kind} relation")


def bare(scene: Scene, subjects: tuple[Subject | None, ...]) -> Rendering:
    return Rendering(scene, subjects, None, NEUTRAL_COMPOSITION, None, None, (), None, ())


def test_image_shows_the_drawn_colour(tmp_path: Path) -> None:
    scene = sample_scene(random.Random("x"), "p1")
    subject = replace(scene.subjects[0], texture=None, cx=0.5, cy=0.5, r=0.1)
    others = (None,) * (len(scene.subjects) - 1)
    wrong = next(c for c in COLOURS if c != subject.colour)
    right_img = draw_rendering(bare(scene, (subject, *others)), 64, random.Random(0))
    wrong_img = draw_rendering(
        bare(scene, (replace(subject, colour=wrong), *others)), 64, random.Random(0)
    )
    assert right_img.getpixel((32, 32)) == subject.colour.rgb
    assert wrong_img.getpixel((32, 32)) == wrong.rgb
    empty = draw_rendering(bare(scene, (None, *others)), 64, random.Random(0))
    assert empty.getpixel((32, 32)) != subject.colour.rgb
    again = draw_rendering(bare(scene, (subject, *others)), 64, random.Random(0))
    assert png_bytes(again) == png_bytes(right_img)


def test_description_states_contradictions_and_omits_missing() -> None:
    scene = scene_with("left_of")
    rel = next(r for r in scene.relations if r.kind == "left_of")
    a, b = scene.subjects[rel.a], scene.subjects[rel.b]
    wrong = next(c for c in COLOURS if c not in (a.colour, b.colour))
    drawn: list[Subject | None] = [None] * len(scene.subjects)
    drawn[rel.a], drawn[rel.b] = replace(a, cx=b.cx, colour=wrong), replace(b, cx=a.cx)
    text = describe_rendering(bare(scene, tuple(drawn)), random.Random(1))
    assert f"The {a.noun.name} appears to the right of the {b.noun.name}." in text
    assert f"{wrong.name} {a.noun.name}" in text or f"{wrong.alt} {a.noun.name}" in text
    assert f"{a.colour.name} {a.noun.name}" not in text
    for k, subject in enumerate(scene.subjects):
        if k not in (rel.a, rel.b):
            assert subject.noun.name not in text
    assert "flat, pale grey backdrop" in text  # no environment was drawn
