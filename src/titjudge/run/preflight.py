"""The models a run config uses, for the preflight that `titjudge run`, `estimate`, `explain`
and `score` (and `titjudge.score()`) do before building any of them (`models.preflight`), and
the data files, images and templates it reads: every problem is named in the same one line,
so what `run` refuses, the commands that plan a run refuse too (issue 48).

The library's `titjudge.evaluate()` skips it: there, building each backend still refuses
missing credentials and unknown providers, one model at a time, before the first item.
"""

from __future__ import annotations

from pathlib import Path

from titjudge.config.schema import DataConfig, RunConfig
from titjudge.errors import ConfigError, DataError
from titjudge.judges.options import ModelJudgeOptions
from titjudge.models.preflight import ModelUse, answered_models, check_models
from titjudge.prompts.loader import load_template
from titjudge.user_files import user_file_problems


def run_model_uses(config: RunConfig) -> list[ModelUse]:
    """The describer, then every judge's model as the judge reaches it (a describer-bound judge
    that names none uses the describer's)."""
    describer = config.describer
    uses = [ModelUse(describer.model, describer, "describer")]
    for judge in config.judges:
        if isinstance(judge, ModelJudgeOptions):
            model, options = judge.reach(describer.model, describer)
            uses.append(ModelUse(model, options, f"judge {judge.name}"))
    return uses


def preflight_run(config: RunConfig, source: str, *, with_data: bool = True) -> list[str]:
    """Raise one `ConfigError` naming everything the config's models are missing (a `litellm:`
    model with answers in the run's cache is checked when a call first misses it), its
    templates that do not load and, `with_data` (`titjudge run`), its data files' problems.
    Returns the notes to show before the run starts (some images missing)."""
    notes: list[str] = []
    others = data_problems(config.data, notes) if with_data else []
    others += template_problems(run_templates(config))
    check_models(run_model_uses(config), source, answered_models(config.run.cache_dir), others)
    return notes


def run_templates(config: RunConfig) -> list[tuple[str, str]]:
    """(template, key) of every template the config names."""
    found = [(config.describer.prompt, "describer.prompt")]
    for judge in config.judges:
        name = getattr(judge, "prompt", None)
        if isinstance(name, str):
            found.append((name, f"judges.{judge.name}.prompt"))
    return found


def template_problems(templates: list[tuple[str, str]]) -> list[str]:
    """'<why the template does not load> (<key>)' per template named, each name once."""
    problems: dict[str, str] = {}
    for name, key in templates:
        if name in problems:
            continue
        try:
            load_template(name)
        except ConfigError as exc:
            problems[name] = f"{exc} ({key})"
    return list(problems.values())


def data_problems(data: DataConfig | None, notes: list[str] | None = None) -> list[str]:
    """What stops the manifest, the human pairs and the ranks from loading, each with its key;
    the pairs are checked against the manifest's items when it loads. Every image is looked
    up: none there is a problem; some missing is a note added to `notes` (those items fail)."""
    from titjudge.data.manifest import load_manifest
    from titjudge.data.pairs import load_pairs, load_ranks

    if data is None:
        return ["no 'data' section; add data.manifest to run it"]
    problems = []
    items = None
    try:
        items = {item.item_id: item for item in load_manifest(data.manifest)}
    except DataError as exc:
        problems.append(f"{exc} (data.manifest)")
    if items:
        try:
            problem, note = image_problems([item.image for item in items.values()], data.manifest)
        except DataError as exc:  # the lookups did not answer in time
            problem, note = f"{exc} (data.manifest)", None
        problems += [problem] if problem else []
        if note and notes is not None:
            notes.append(note)
    try:
        if data.human_pairs is not None:
            load_pairs(data.human_pairs, items)
    except DataError as exc:
        problems.append(f"{exc} (data.human_pairs)")
    try:
        if data.ranks is not None:
            load_ranks(data.ranks)
    except DataError as exc:
        problems.append(f"{exc} (data.ranks)")
    return problems


def image_problems(images: list[Path], manifest: Path) -> tuple[str | None, str | None]:
    """(problem, note) of the manifest's images, looked up as a run opens them
    (`user_files`: a regular file, within its bound): none readable is a problem (nothing to
    run); some not readable is a note (their items fail), one line either way."""
    found = user_file_problems(images, "image")
    bad = [(image, why) for image, why in zip(images, found, strict=True) if why is not None]
    if not bad:
        return None, None
    missing = sum(why == "image file not found" for _, why in bad)
    first, why = next(((i, w) for i, w in bad if w != "image file not found"), bad[0])
    total = f"the {len(images)} images in {manifest}"
    if missing == len(bad):  # the common case, said as it always was
        if len(bad) == len(images):
            return f"none of {total} exists, e.g. {first} (data.manifest)", None
        return None, f"{len(bad)} of {total} are missing, e.g. {first}: their items will fail"
    counts = f"{len(bad) - missing} not a regular file or unreadable"
    counts = f"{missing} not found, {counts}" if missing else counts
    example = f"e.g. {first}: {why}"
    if len(bad) == len(images):
        return f"none of {total} can be read ({counts}), {example} (data.manifest)", None
    return (
        None,
        f"{len(bad)} of {total} cannot be read ({counts}), {example}; their items will fail",
    )
