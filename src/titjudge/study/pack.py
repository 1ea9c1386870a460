"""`titjudge pack RUN -o FILE.tjpack [--with-images]`: one run as one file a reader of a paper
can take home.

A pack is a zip (entries in a fixed order, fixed timestamps: the same run packs to the same
bytes) of:

    manifest.json          format, version, what was packed, and each file's sha256 and size
    run/config.yaml        the typed resolved config, its paths replaced by the pack's own
    run/items.jsonl        every describer and judge answer, parsed and raw, the model that
                           answered, usage and cost (each image named by its sha256)
    run/scores.csv, run/pairs_<judge>.jsonl, run/metrics.json, run/summary.json
    run/audit.json         the audit's verdicts per pair (`titjudge audit --json`)
    data/manifest.jsonl    the prompts and T2I models, each image named by its sha256
    data/pairs.csv, data/ranks.csv, data/ratings.csv, data/dataset.json
                           the human judgements the metrics used (those the run read)
    templates/<name>.txt   every template the run used, where its text still has the
                           sha256 the run recorded
    env/versions.json      the package versions the run recorded, and the packer's
    env/requirements.lock  the lock titjudge was installed from, where it is found
    data/images/<sha256><ext>
                           the images themselves, with --with-images (the manifest names
                           them `images/<sha256><ext>`, beside it)

No secret (every text goes through `safety.redact`) and no absolute path (a path the pack
holds is replaced by the pack's name for it; any other by `(not packed) <file name>`).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.errors import DataError
from titjudge.files import atomic_open, read_text
from titjudge.safety import redact

FORMAT = "tjpack"
#: the pack format this titjudge writes and the newest it reads
PACK_VERSION = 1
MANIFEST = "manifest.json"
#: a zip entry's timestamp: fixed, so a run packs to the same bytes every time
STAMP = (2020, 1, 1, 0, 0, 0)
#: a run config's data files (its `data.<key>`) and their names in a pack's data/ folder
DATA_FILES = (("manifest", "manifest.jsonl"), ("human_pairs", "pairs.csv"), ("ranks", "ranks.csv"))
RUN_FILES = ("config.yaml", "items.jsonl", "scores.csv", "metrics.json", "summary.json")


@dataclass
class Packed:
    """What `build_pack` wrote: the file, its entries, and what it could not put in."""

    path: Path
    files: dict[str, dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    images: int = 0


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _image_names(paths: list[str]) -> tuple[dict[str, str], dict[str, bytes], list[str]]:
    """Each image path -> `sha256:<hex>` (its digest) and the bytes by pack name
    (`images/<hex><ext>`); the paths that cannot be read, by message."""
    names: dict[str, str] = {}
    blobs: dict[str, bytes] = {}
    missing = []
    for path in dict.fromkeys(paths):
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            missing.append(f"{Path(path).name}: {exc.strerror or exc}")
            continue
        digest = sha256_of(data)
        names[path] = digest
        blobs[f"data/images/{digest}{Path(path).suffix.lower()}"] = data
    return names, blobs, missing


#: an absolute path in a string: at its start or after a spec's prefix (`replay:/...`), never
#: a URL's `//host/...`
_ABSOLUTE = re.compile(r"(?:(?<=^)|(?<=[:=\s]))(?<!//)/(?!/)[^\s'\"]+")


def rewrite_paths(value: Any, packed: dict[str, str]) -> Any:
    """`value` (a config, the audit's document) with every absolute path replaced: by the
    pack's name where it is packed, else by `(not packed) <file name>`."""
    if isinstance(value, dict):
        return {k: rewrite_paths(v, packed) for k, v in value.items()}
    if isinstance(value, list):
        return [rewrite_paths(v, packed) for v in value]
    if isinstance(value, str) and "/" in value:
        return _ABSOLUTE.sub(
            lambda m: packed.get(m.group(0), f"(not packed) {Path(m.group(0)).name}"), value
        )
    return value


def point_data(config: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`config` (a packed config.yaml's mapping) with its data files at `folder`'s."""
    section = config.get("data") or {}
    for key, name in DATA_FILES:
        if section.get(key):
            section[key] = str((folder / name).resolve())
    return config


def json_lines(text: str) -> list[str]:
    """A JSONL file's lines: split on newlines only (`str.splitlines` also splits on U+2028,
    NEL and the like, which JSON keeps raw inside its strings)."""
    return [line for line in text.split("\n") if line.strip()]


def _redacted(value: Any) -> Any:
    """`value` with `safety.redact` applied to every string in it (a JSON document's texts,
    never its syntax: redacting serialized JSON could eat a quote)."""
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return redact(value) if isinstance(value, str) else value


def _clean_text(text: str, name: str) -> str:
    """A packed file's text redacted: a JSON or JSONL file value by value (its syntax kept),
    any other as text."""
    if name.endswith(".jsonl"):
        rows = [json.loads(line) for line in json_lines(text)]
        return "".join(json.dumps(_redacted(r)) + "\n" for r in rows)
    if name.endswith(".json"):
        return json.dumps(_redacted(json.loads(text)), indent=1) + "\n"
    return redact(text)


def _lock_file() -> Path | None:
    """The requirements.lock beside the installed source tree (an editable install, a
    checkout), where there is one."""
    found = Path(__file__).resolve().parents[3] / "requirements.lock"  # src/titjudge/study/
    return found if found.is_file() else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _templates(config: dict[str, Any], notes: list[str]) -> dict[str, bytes]:
    """Each template the run recorded (by name and sha256), where a text found now (shipped,
    or the user's .txt file the config names) has that sha256; one that changed since the
    run is named in `notes`, not packed."""
    from titjudge.prompts.loader import TEMPLATE_DIR

    resolved = config.get("resolved") or {}
    wanted: dict[str, str | None] = {}
    records = [(resolved.get("describer") or {}).get("template")]
    for judge in resolved.get("judges") or []:
        records += [judge.get(k) for k in ("template", "pairwise_template")]
    for found in records:
        if isinstance(found, dict) and found.get("name"):
            wanted[found["name"]] = found.get("sha256")
    user_files = {Path(v).stem: Path(v) for v in _strings(config) if v.endswith(".txt")}
    out = {}
    for name, sha in wanted.items():
        path = TEMPLATE_DIR / f"{name}.txt"
        if not path.is_file():
            path = user_files.get(name, path)
        try:
            data = path.read_text(encoding="utf-8").encode("utf-8")
        except OSError:
            notes.append(f"template {name}: not found now (not packed)")
            continue
        if sha is not None and sha256_of(data) != sha:
            notes.append(f"template {name}: its text changed since the run (not packed)")
            continue
        out[f"templates/{name}.txt"] = data
    return out


def pack_entries(run: Path, with_images: bool) -> tuple[dict[str, bytes], list[str], int]:
    """Every entry of the pack of `run` (a run dir, checked against its files.json first)
    but the manifest, the notes, and how many images it holds."""
    import yaml

    from titjudge.data.manifest import load_manifest
    from titjudge.report.audit.json_view import audit_json
    from titjudge.report.audit.load import load_audit
    from titjudge.report.record import load_run

    record = load_run(run)  # every file checked against files.json
    run_dir = record.run_dir
    assert run_dir is not None
    config = yaml.safe_load(read_text(run_dir / "config.yaml", "run config"))
    data = config.get("data") or {}
    if not data.get("human_pairs"):
        raise DataError(f"{run_dir}: the run has no human pairs: a pack holds numbers to check")
    notes: list[str] = []
    entries: dict[str, bytes] = {}
    manifest_path = Path(data["manifest"])
    sources = {str(data[key]): f"data/{name}" for key, name in DATA_FILES if data.get(key)}
    for beside in ("ratings.csv", "dataset.json"):
        if (manifest_path.parent / beside).is_file():
            sources[str(manifest_path.parent / beside)] = f"data/{beside}"
    items = load_manifest(manifest_path)
    by_id = {item.item_id: item for item in items}
    lines = [json.loads(x) for x in json_lines(read_text(run_dir / "items.jsonl", "items"))]
    in_run = {x["item_id"] for x in lines}
    used = [str(i.image) for i in items if i.item_id in in_run]
    digests, blobs, missing = _image_names(used)
    notes += [f"image not packed: {m}" for m in missing]
    extension = {path: Path(path).suffix.lower() for path in digests}

    def image_name(path: str) -> str:
        if path not in digests:
            return f"(not packed) {Path(path).name}"
        return (
            f"images/{digests[path]}{extension[path]}" if with_images else f"sha256:{digests[path]}"
        )

    manifest_lines = []
    for line in json_lines(read_text(manifest_path, "manifest")):
        if not line.strip():
            continue
        row = json.loads(line)
        image = str(by_id[row["item_id"]].image)
        row["image"] = image_name(image)
        row["image_sha256"] = digests.get(image)
        manifest_lines.append(json.dumps(row))
    entries["data/manifest.jsonl"] = ("\n".join(manifest_lines) + "\n").encode("utf-8")
    for source, name in sources.items():
        if name != "data/manifest.jsonl":
            entries[name] = _clean_text(read_text(Path(source), name), name).encode("utf-8")
    for row in lines:
        row["image"] = image_name(row.get("image") or "")
    entries["run/items.jsonl"] = "".join(json.dumps(_redacted(row)) + "\n" for row in lines).encode(
        "utf-8"
    )
    packed_names = {**sources, **{p: image_name(p) for p in digests}}
    entries["run/config.yaml"] = yaml.safe_dump(
        _redacted(rewrite_paths(config, packed_names)), sort_keys=False, allow_unicode=True
    ).encode("utf-8")
    for name in (*RUN_FILES[2:], *sorted(p.name for p in run_dir.glob("pairs_*.jsonl"))):
        if (run_dir / name).is_file():
            text = read_text(run_dir / name, name)
            entries[f"run/{name}"] = _clean_text(text, name).encode("utf-8")
    audit = audit_json(load_audit(run_dir))
    audit.pop("run_dir", None)
    entries["run/audit.json"] = (  # its texts redacted as items.jsonl's are
        json.dumps(
            _redacted(rewrite_paths(audit, packed_names)),
            sort_keys=True,
            indent=1,
            ensure_ascii=False,
        )
        + "\n"
    ).encode("utf-8")
    entries.update(_templates(config, notes))
    entries["env/versions.json"] = _versions(config).encode("utf-8")
    lock = _lock_file()
    if lock is not None:
        entries["env/requirements.lock"] = lock.read_bytes()
    else:
        notes.append("requirements.lock: not found beside this titjudge (not packed)")
    if with_images:
        entries.update(blobs)
    return entries, notes, len(blobs) if with_images else 0


def _versions(config: dict[str, Any]) -> str:
    from titjudge.report.run_dir import package_versions

    return (
        json.dumps(
            {
                "run": (config.get("resolved") or {}).get("packages") or {},
                "packed_with": package_versions(),
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )


def build_pack(run: Path, out: Path, with_images: bool = False) -> Packed:
    """The pack of `run` written to `out` (atomically: a pack is never half written)."""
    _check_out(out)
    entries, notes, images = pack_entries(run, with_images)
    return write_pack(out, entries, notes, images, {"kind": "run", "with_images": with_images})


def _check_out(out: Path) -> None:
    if out.suffix != ".tjpack":
        raise DataError(f"{out}: a pack's name ends in .tjpack")
    if out.is_dir():
        raise DataError(f"{out}: is a folder; name the pack file")


def write_pack(
    out: Path, entries: dict[str, bytes], notes: list[str], images: int, about: dict[str, Any]
) -> Packed:
    """`entries` as a pack at `out`, its manifest listing each with its sha256 and size."""
    _check_out(out)
    files = {
        name: {"sha256": sha256_of(data), "bytes": len(data)} for name, data in entries.items()
    }
    manifest = {
        "format": FORMAT,
        "version": PACK_VERSION,
        **about,
        "notes": notes,
        "files": dict(sorted(files.items())),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        named = [(MANIFEST, json.dumps(manifest, indent=1).encode() + b"\n")]
        for name, data in named + sorted(entries.items()):
            info = zipfile.ZipInfo(name, date_time=STAMP)
            stored = "/images/" in f"/{name}"  # images are compressed already
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    try:
        with atomic_open(out, binary=True) as handle:
            handle.write(buffer.getvalue())
    except OSError as exc:
        raise DataError(f"{out}: cannot write the pack ({exc.strerror or exc})") from None
    return Packed(out, files, notes, images)


__all__ = [
    "FORMAT",
    "DATA_FILES",
    "MANIFEST",
    "PACK_VERSION",
    "Packed",
    "build_pack",
    "pack_entries",
    "point_data",
    "rewrite_paths",
    "write_pack",
]
