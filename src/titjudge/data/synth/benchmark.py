"""A SYNTHETIC benchmark shaped like LPG-Bench, for end-to-end runs and benchmarks offline.

Per prompt a scene is sampled and written as a long prompt; each simulated T2I model
(latent skill) renders it imperfectly into a real PNG plus a describer-style text of
what was drawn. Simulated annotators compare every pair of images of a prompt, with
noise and a tie option when qualities are close; 3 experts vote on every pair; the
votes go through the real `aggregate_votes` and `rank_items`. Everything is a pure
function of the seed: per-item random streams are keyed by (seed, prompt, model), so
parallel workers produce byte-identical files.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from titjudge.data.manifest import write_manifest
from titjudge.data.pairs import write_csv, write_pairs, write_ranks, write_votes
from titjudge.data.ranking import rank_items
from titjudge.data.synth.draw import draw_rendering, png_bytes
from titjudge.data.synth.scene import ModelProfile, make_models, render, sample_scene
from titjudge.data.synth.text import describe_rendering, write_prompt
from titjudge.data.votes import AggregationResult, aggregate_votes
from titjudge.errors import DataError
from titjudge.files import atomic_write, jsonl_text
from titjudge.records.descriptions import DescriptionLine
from titjudge.records.items import Item, RankRow, Vote, Winner

#: every judge sees latent quality plus a per-image "appeal" shared by all judges (sd),
#: so human verdicts track but do not equal the truth
APPEAL_NOISE = 0.03
#: annotators perceive the quality difference plus noise of this spread (per annotator)
ANNOTATOR_NOISE = (0.04, 0.14)
#: a perceived difference smaller than this is voted a tie (~11% tie pairs at 13 models)
ANNOTATOR_TIE_MARGIN = 0.08
EXPERT_NOISE, EXPERT_TIE_MARGIN, N_EXPERTS = 0.05, 0.04, 3


@dataclass(frozen=True)
class SynthItem:
    """Everything the benchmark records about one generated image."""

    item_id: str
    prompt_id: str
    prompt: str
    model: str
    image: str  # relative to the output folder
    image_sha256: str
    description: str
    quality: float
    elements: tuple[tuple[str, str, str], ...]


@dataclass
class SynthResult:
    out: Path
    n_prompts: int
    n_models: int
    items: list[Item]
    models: list[ModelProfile]
    votes: list[Vote]
    aggregation: AggregationResult
    n_ranks: int
    seconds: float
    workers: int


def _rng(seed: int, *keys: str) -> random.Random:
    """An independent, reproducible stream (str seeds hash with SHA-512, not PYTHONHASHSEED)."""
    return random.Random("/".join(("titjudge-synth", str(seed), *keys)))


def _prompt_job(job: tuple[int, int, int, list[ModelProfile], str]) -> tuple[str, list[SynthItem]]:
    """Build one prompt and all its models' images; runs in a worker process."""
    seed, index, image_size, models, out = job
    prompt_id = f"p{index + 1:04d}"
    scene = sample_scene(_rng(seed, prompt_id, "scene"), prompt_id)
    prompt = write_prompt(scene, _rng(seed, prompt_id, "prompt"))
    items: list[SynthItem] = []
    for model in models:
        rendering = render(scene, model, _rng(seed, prompt_id, model.name, "render"))
        data = png_bytes(
            draw_rendering(rendering, image_size, _rng(seed, prompt_id, model.name, "draw"))
        )
        relative = f"images/{model.name}/{prompt_id}.png"
        (Path(out) / relative).write_bytes(data)
        items.append(
            SynthItem(
                item_id=f"{prompt_id}__{model.name}",
                prompt_id=prompt_id,
                prompt=prompt,
                model=model.name,
                image=relative,
                image_sha256=hashlib.sha256(data).hexdigest(),
                description=describe_rendering(
                    rendering, _rng(seed, prompt_id, model.name, "describe")
                ),
                quality=rendering.quality,
                elements=tuple((e.category, e.label, e.status) for e in rendering.elements),
            )
        )
    return prompt_id, items


def _verdicts(diff: np.ndarray, noise: np.ndarray, margin: float) -> np.ndarray:
    """0 = a, 1 = b, 2 = tie for each (pair, judge): perceived difference vs the tie margin."""
    perceived = diff[:, None] + noise
    return np.where(np.abs(perceived) < margin, 2, np.where(perceived > 0, 0, 1))


def simulate_votes(
    items: list[SynthItem], seed: int, annotators: int, prompt_index: int
) -> list[Vote]:
    """All pairs of one prompt's items, each judged by the annotator panel and 3 experts."""
    panel = np.random.default_rng([seed, 1]).uniform(*ANNOTATOR_NOISE, size=annotators)
    rng = np.random.default_rng([seed, 2, prompt_index])
    pairs = list(combinations(range(len(items)), 2))
    swap = rng.random(len(pairs)) < 0.5
    pairs = [(j, i) if flip else (i, j) for (i, j), flip in zip(pairs, swap, strict=True)]
    quality = np.array([item.quality for item in items]) + rng.normal(0.0, APPEAL_NOISE, len(items))
    diff = np.array([quality[i] - quality[j] for i, j in pairs])
    crowd = _verdicts(
        diff, rng.normal(0.0, 1.0, (len(pairs), annotators)) * panel, ANNOTATOR_TIE_MARGIN
    )
    experts = _verdicts(
        diff, rng.normal(0.0, EXPERT_NOISE, (len(pairs), N_EXPERTS)), EXPERT_TIE_MARGIN
    )
    names: tuple[Winner, ...] = ("a", "b", "tie")
    votes: list[Vote] = []
    for row, (i, j) in enumerate(pairs):
        counts = np.bincount(crowd[row], minlength=3)
        votes.append(
            Vote(
                items[i].prompt_id,
                items[i].item_id,
                items[j].item_id,
                int(counts[0]),
                int(counts[1]),
                int(counts[2]),
                tuple(names[v] for v in experts[row]),
            )
        )
    return votes


def _prepare(out: Path, models: list[ModelProfile]) -> None:
    """Create `out`; only overwrite a folder that is empty or an earlier synthetic benchmark."""
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: output exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / "SYNTHETIC.md").is_file():
            raise DataError(
                f"{out}: folder is not empty and is not a synthetic benchmark; choose another --out"
            )
        shutil.rmtree(out / "images", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    # mark the folder first, so an interrupted run can be regenerated in place
    atomic_write(
        out / "SYNTHETIC.md",
        "# SYNTHETIC BENCHMARK - NOT REAL DATA (generation incomplete or interrupted)\n",
    )
    for model in models:
        (out / "images" / model.name).mkdir(parents=True, exist_ok=True)


def _check_args(
    n_prompts: int, n_models: int, image_size: int, annotators: int, workers: int | None
) -> None:
    if workers is not None and workers < 1:
        raise DataError(f"--workers must be at least 1, got {workers}")
    if n_prompts < 1:
        raise DataError(f"--prompts must be at least 1, got {n_prompts}")
    if n_models < 2:
        raise DataError(f"--models must be at least 2 (pairs need two images), got {n_models}")
    if not 32 <= image_size <= 4096:
        raise DataError(f"--image-size must be between 32 and 4096 pixels, got {image_size}")
    if annotators < 1:
        raise DataError(f"--annotators must be at least 1, got {annotators}")


def synthesize(
    out: Path,
    n_prompts: int,
    n_models: int,
    seed: int = 0,
    image_size: int = 256,
    annotators: int = 15,
    workers: int | None = None,
) -> SynthResult:
    """Write the synthetic benchmark into `out` (see SYNTHETIC.md there for the file list).

    `out` must be empty, new, or an earlier synthetic benchmark (which is replaced).
    `workers` processes draw the images (default: all cores for large runs); the files
    are byte-identical whatever the number of workers.
    """
    _check_args(n_prompts, n_models, image_size, annotators, workers)
    started = time.perf_counter()
    out = Path(out)
    models = make_models(_rng(seed, "models"), n_models)
    _prepare(out, models)
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if n_prompts * n_models >= 150 else 1
    jobs = [(seed, index, image_size, models, str(out)) for index in range(n_prompts)]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            built = list(pool.map(_prompt_job, jobs, chunksize=max(1, n_prompts // (workers * 8))))
    else:
        built = [_prompt_job(job) for job in jobs]
    synth_items = [item for _, prompt_items in built for item in prompt_items]
    votes = [
        vote
        for index, (_, items) in enumerate(built)
        for vote in simulate_votes(items, seed, annotators, index)
    ]
    aggregation = aggregate_votes(votes, panel_size=annotators)
    ranks = rank_items(aggregation.pairs)
    root = Path(os.path.abspath(out))
    items = [Item(s.item_id, s.prompt_id, s.prompt, root / s.image, s.model) for s in synth_items]
    _write_outputs(out, synth_items, items, models, votes, aggregation, ranks)
    result = SynthResult(
        out,
        n_prompts,
        n_models,
        items,
        models,
        votes,
        aggregation,
        len(ranks),
        time.perf_counter() - started,
        workers,
    )
    atomic_write(out / "SYNTHETIC.md", _readme(result, seed, image_size, annotators))
    return result


def _write_outputs(
    out: Path,
    synth_items: list[SynthItem],
    items: list[Item],
    models: list[ModelProfile],
    votes: list[Vote],
    aggregation: AggregationResult,
    ranks: list[RankRow],
) -> None:
    write_manifest(items, out / "manifest.jsonl")
    descriptions = (
        DescriptionLine(
            item_id=s.item_id,
            image=s.image,
            image_sha256=s.image_sha256,
            description=s.description,
        ).model_dump()
        for s in synth_items
    )
    atomic_write(out / "descriptions.jsonl", jsonl_text(descriptions))
    elements = (
        {
            "item_id": s.item_id,
            "elements": [
                {"category": c, "element": label, "status": status}
                for c, label, status in s.elements
            ],
        }
        for s in synth_items
    )
    atomic_write(out / "elements.jsonl", jsonl_text(elements))
    write_votes(votes, out / "votes.csv")
    write_pairs(aggregation.pairs, out / "pairs.csv")
    write_ranks(ranks, out / "ranks.csv")
    skill = {m.name: m.skill for m in models}
    write_csv(
        out / "truth.csv",
        ("item_id", "prompt_id", "t2i_model", "quality", "model_skill"),
        (
            (s.item_id, s.prompt_id, s.model, f"{s.quality:.6f}", f"{skill[s.model]:.4f}")
            for s in synth_items
        ),
    )


def _readme(result: SynthResult, seed: int, image_size: int, annotators: int) -> str:
    agg = result.aggregation
    skills = "\n".join(
        f"| {m.name} | {m.skill:.4f} |" for m in sorted(result.models, key=lambda m: -m.skill)
    )
    return f"""# SYNTHETIC BENCHMARK - NOT REAL DATA

**Everything in this folder is simulated.** The prompts, images, descriptions, annotator
votes and rankings were generated by `titjudge data synth`. The "T2I models" are random
skill levels, the images are crude Pillow drawings, the annotators are noise models.
Numbers measured on this folder say whether code works, **never** how well a real
metric, VLM or T2I model performs. Do not report them as results.

## Parameters
- seed: {seed}
- prompts: {result.n_prompts}
- models: {result.n_models}
- image size: {image_size} px
- annotators per pair: {annotators} (+ {N_EXPERTS} experts on every pair)
- perceived quality: latent quality + per-image appeal shared by all judges (sd {APPEAL_NOISE})
- annotator noise: sd uniform in {ANNOTATOR_NOISE} per annotator, tie when |perceived difference| < {ANNOTATOR_TIE_MARGIN}
- expert noise: sd {EXPERT_NOISE}, tie margin {EXPERT_TIE_MARGIN}

Same seed and parameters give byte-identical files.

## Files
- `manifest.jsonl`: item_id, prompt_id, prompt, image, t2i_model
- `images/<model>/<prompt_id>.png`
- `descriptions.jsonl`: item_id, image, image_sha256, description (what was drawn; for the replay describer)
- `votes.csv`: simulated annotator counts and expert verdicts per pair
- `pairs.csv`: aggregated human pairs ({len(agg.pairs)}; {agg.n_ties} ties; rules: strong {agg.strong},
  advantage {agg.advantage}, expert {agg.expert}, expert split -> tie {agg.expert_split_tie})
- `ranks.csv`: per-prompt Copeland ranks from the pairs
- `truth.csv`: latent quality per item (weighted share of prompt elements rendered correctly) and model skill
- `elements.jsonl`: per item, every graded prompt element and whether it was drawn correct, wrong or missing

## Latent model skills
| model | skill |
|---|---|
{skills}
"""
