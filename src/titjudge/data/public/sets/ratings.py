"""The sets that rate each image on a scale: EvalMuse-40K (Han et al. 2024), GenAI-Bench (Li
et al. 2024) and LongT2IBench (2025). Their papers score a metric by its correlation with the
mean rating (and GenAI-Bench by pairwise accuracy over every two images too)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from titjudge.data.public.presets import (
    Dropped,
    Preset,
    RatedImages,
    Rating,
    Row,
    image_file,
    number,
    text_field,
)


def _ratings(value: object, name: str, low: float | None, high: float | None) -> tuple[float, ...]:
    """A list of one or more ratings within [low, high], or Dropped."""
    if not isinstance(value, list) or not value:
        raise Dropped(f"{name} is not a list of ratings")
    found = tuple(number(v) for v in value)
    if any(v is None for v in found):
        raise Dropped(f"{name} holds a value that is not a number")
    if any((low is not None and v < low) or (high is not None and v > high) for v in found):  # type: ignore[operator]
        raise Dropped(f"{name} holds a rating outside {low:g}-{high:g}")
    return found  # type: ignore[return-value]


def _first_file(folder: Path, relative: object, unders: Sequence[str]) -> bytes:
    """The image at `relative` under the first of `unders` (folders of the snapshot) that
    has it: the sets' own code joins the path to a folder the card does not pin down."""
    last: Dropped | None = None
    for under in unders:
        try:
            return image_file(folder, relative, under)
        except Dropped as why:
            last = why
    raise last or Dropped("no image path")


def _folder_model(path: object) -> str:
    """The generator an image path names by its first folder (EvalMuse: `<model>/<file>`)."""
    parts = PurePosixPath(str(path)).parts
    return (
        parts[0]
        if len(parts) > 1 and parts[0] != "images"
        else (parts[1] if len(parts) > 2 else "unknown")
    )


def _evalmuse_label(row: Row) -> Rating:
    return Rating(_ratings(row.get("total_score"), "total_score", 1, 5))


EVALMUSE = Preset(
    name="evalmuse",
    title="EvalMuse-40K",
    # the dataset card's dataset_info: prompt_id, prompt, type, img_path (string),
    # total_score (a sequence of int64, one per annotator, 1-5), element_score (a string),
    # promt_meaningless, split_confidence, attribute_confidence, fidelity_label; data_files
    # train_list.json ("test.json: data used for testing, annotations will be available
    # later"); images.zip.part-{aa-af} joined and unpacked (`cat images.zip.part-* >
    # images.zip; unzip images.zip`)
    card="https://huggingface.co/datasets/DY-Evalab/EvalMuse",
    repo="DY-Evalab/EvalMuse",
    licence="BSD-3-Clause (the dataset card)",
    default_split="train",
    shape="ratings",
    light=("prompt", "img_path", "total_score"),
    heavy=(),
    prompt=lambda row: text_field(row, "prompt"),
    label=_evalmuse_label,
    images=lambda row, folder: [
        (
            _first_file(folder, row.get("img_path"), ("", "images")),
            _folder_model(row.get("img_path")),
        )
    ],
    files=("{split}_list.json", "{split}.json"),
    measure="ratings",
    protocol=(
        "one row is one image of a prompt with its overall alignment scores, one per "
        "annotator (`total_score`, 1-5); their mean is the image's mean opinion score "
        "(ratings.csv), and every two images of a prompt are one pair won by the higher "
        "mean (a tie when equal). A row without scores (test.json until its annotations "
        "are released) is dropped and counted. The element scores are not read.\n\n"
        "EvalMuse's own numbers (github.com/DYEvaLab/EvalMuse, process/process_train.py "
        "and NTIRE2025/Track1_Alignment/evaluate.py) are SRCC and PLCC against the mean "
        "`total_score` pooled over every image, PLCC after a 4-parameter logistic fit: a "
        "run's `protocol` block gives both (plcc_logistic fits the judge's scores to the "
        "mean ratings; that evaluate.py passes the two the other way round)."
    ),
    accuracy=(
        "pairwise accuracy over every two images of a prompt ordered by their mean rating "
        "(titjudge's view; the set's own numbers are the run's SRCC / PLCC)"
    ),
    comparable=True,
    published=(
        "FGA-BLIP2: SRCC 0.7742, PLCC 0.7722 (EvalMuse-40K, arXiv:2412.18150, overall alignment)",
    ),
)


def _genai_models(row: Row) -> list[tuple[str, object]]:
    models = row.get("models")
    if not isinstance(models, dict) or len(models) < 1:
        raise Dropped("models is not an object of each model's ratings")
    return sorted(models.items())


def _genai_label(row: Row) -> RatedImages:
    return RatedImages(tuple(_ratings(r, f"models.{m}", 1, 5) for m, r in _genai_models(row)))


def _genai_images(row: Row, folder: Path) -> Sequence[tuple[bytes, str]]:
    key = text_field(row, "__key__")
    return [(image_file(folder, f"{model}/{key}.jpeg"), model) for model, _ in _genai_models(row)]


GENAI_BENCH = Preset(
    name="genai-bench",
    title="GenAI-Bench (image)",
    # genai_image.json: an object keyed by the prompt's id ("00000", ...), each
    # {id, prompt, models: {MODEL: [three 1-5 alignment ratings]}}; images <MODEL>/<key>.jpeg
    # beside it (t2v_metrics' dataset.py GenAIBench_Image reads the same file)
    card="https://huggingface.co/datasets/BaiqiL/GenAI-Bench-1600",
    repo="BaiqiL/GenAI-Bench-1600",
    licence="as the dataset card states it (not checked here)",
    default_split="image",
    shape="ratings",
    light=("__key__", "prompt", "models"),
    heavy=(),
    prompt=lambda row: text_field(row, "prompt"),
    label=_genai_label,
    images=_genai_images,
    files=("genai_{split}.json",),
    measure="ratings-pairwise",
    protocol=(
        "one row is one prompt with each model's image rated by three people (1-5); the "
        "mean of an image's ratings is its mean opinion score (ratings.csv), and every two "
        "images of a prompt are one pair won by the higher mean. A row holding a rating "
        "outside 1-5 is dropped and counted.\n\n"
        "GenAI-Bench's own numbers (github.com/linzhiqiu/t2v_metrics, dataset.py "
        "GenAIBench_Image.evaluate_scores) are Pearson's r, Kendall's tau-b and the "
        "pairwise accuracy with tie calibration (Deutsch et al. 2023) of the scores against "
        "the mean ratings over every two images of the whole set, not within prompts, the "
        "tie threshold chosen on those same pairs: a run's `protocol` block gives those."
    ),
    accuracy=(
        "pairwise accuracy over every two images of a prompt ordered by their mean rating "
        "(titjudge's view; the set's own numbers are the run's protocol block)"
    ),
    comparable=True,
)


def _longt2i_label(row: Row) -> Rating:
    found = number(row.get("Align ratio"))
    if found is None:
        raise Dropped("Align ratio is not a number")
    return Rating((found,))


LONGT2IBENCH = Preset(
    name="longt2ibench",
    title="LongT2IBench-14K",
    # github.com/yzc-ippl/LongT2IBench (README: data/split/{train,val,test}.json, data/imgs;
    # test_score.py): each split a JSON array of {en_prompt_text, img_path, "Align ratio"
    # (the image's alignment score), en_structured_data: {entities, entity_alignment,
    # attribute_alignment, relation_alignment}}; images joined as <data>/<img_path>. The hub
    # dataset yzc002/LongT2IBench holds test.json at its root.
    card="https://github.com/yzc-ippl/LongT2IBench",
    repo="yzc002/LongT2IBench",
    licence="not stated (no licence on the dataset page or in the repository)",
    default_split="test",
    shape="ratings",
    light=("en_prompt_text", "img_path", "Align ratio"),
    heavy=(),
    prompt=lambda row: text_field(row, "en_prompt_text"),
    label=_longt2i_label,
    images=lambda row, folder: [
        (_first_file(folder, row.get("img_path"), ("", "data")), "unknown")
    ],
    files=("{split}.json", "data/split/{split}.json", "split/{split}.json"),
    measure="ratings",
    protocol=(
        "one row is one image of a long prompt with its alignment score (`Align ratio`), "
        "its mean opinion score in ratings.csv; every two images of a prompt are one pair "
        "won by the higher score. The entity / attribute / relation labels are not read.\n\n"
        "LongT2IBench's own numbers (test_score.py) are SRCC and PLCC (scipy's spearmanr "
        "and pearsonr, no logistic fit) between the scores and `Align ratio` over the test "
        "images, also per prompt-length interval: a run's `protocol` block gives the pooled "
        "ones."
    ),
    accuracy=(
        "pairwise accuracy over every two images of a prompt ordered by their score "
        "(titjudge's view; the set's own numbers are the run's SRCC / PLCC)"
    ),
    comparable=True,
)
