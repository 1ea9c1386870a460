"""Reading and writing the project's files: one atomic writer, one JSONL reader, one YAML
mapping reader (`load_yaml`, for configs and the run dirs' config.yaml).

Writing is atomic: the bytes go to a temp file in the target's own folder, are flushed to
disk and then renamed over the target, so a reader never sees half a file and a failed
write leaves the old file as it was (and no temp file behind). The file comes out with the
mode a plain `open()` would give it (0666 less the umask), not a temp file's private 0600.
An OS error while writing (a full disk, a read-only folder) is one DataError line.

Reading turns OS, encoding and JSON problems into one DataError naming `file` or
`file:line`.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from titjudge.errors import ConfigError, DataError, where

R = TypeVar("R", bound=BaseModel)


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new, empty file next to `path`; the kernel applies the umask to its 0666 mode."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


@contextmanager
def atomic_open(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """A handle whose contents replace `path` when the block ends without an error.

    Text handles write UTF-8 with newlines as given. The folder is created when missing.
    """
    path = Path(path)
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temp(path)
        handle: IO[Any] = (
            os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        )
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise DataError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace `path` with `data` (text as UTF-8) atomically; see the module docstring."""
    with atomic_open(path, binary=isinstance(data, bytes)) as handle:
        handle.write(data)


def read_text(path: Path, what: str) -> str:
    """Read a UTF-8 text file (a BOM is dropped), turning OS errors into one-line DataErrors."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: expected a {what}, found a folder") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: {what} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read {what} ({exc.strerror})") from None


def jsonl_lines(text: str) -> list[str]:
    """The lines of JSON-lines text, split on newlines only: `str.splitlines` also splits on
    U+2028, U+2029 and NEL, which `jsonl_text` (non-ASCII kept) and many providers leave raw
    inside a JSON string, so a rationale holding one would cut its line in two. A line's
    trailing `\r` (a file written on Windows) is JSON whitespace and stays harmless."""
    return text.split("\n") if text else []


def iter_jsonl(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; bad JSON names file:line."""
    for number, line in enumerate(jsonl_lines(read_text(path, what)), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{where(path, number)}: invalid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(obj, dict):
            raise DataError(
                f"{where(path, number)}: expected a JSON object, got {type(obj).__name__}"
            )
        yield number, obj


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON file that holds one object; anything else is a DataError naming the file."""
    try:
        loaded = json.loads(read_text(path, what))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(loaded, dict):
        raise DataError(f"{path}: expected a JSON object")
    return loaded


def parse_record(record: type[R], obj: Any, loc: str, what: str | None = None) -> R:
    """Validate one file line as `record`; the first problem is one DataError at `loc`
    (`what`: the file's kind, said first: `not a run summary: ...`).

    A validator's own message (`ValueError`) is quoted as written; pydantic's messages name
    the field.
    """
    if what is not None:
        loc = f"{loc}: not a {what}"
    try:
        return record.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        cause = (first.get("ctx") or {}).get("error")
        if first["type"] == "value_error" and cause is not None:
            raise DataError(f"{loc}: {cause}") from None
        field = ".".join(str(part) for part in first["loc"])
        raise DataError(f"{loc}: field '{field}': {first['msg']}") from None


def jsonable(value: Any) -> Any:
    """Copy of `value` where NaN and infinities become None and numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if type(value).__module__ == "numpy" and hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(doc: Any, indent: int | None = 2) -> str:
    """Strict JSON (NaN -> null; `allow_nan=False` guarantees none slips through): how
    metrics.json and every `--json` of the metrics are written."""
    return json.dumps(jsonable(doc), indent=indent, allow_nan=False)


def jsonl_text(records: Iterable[dict[str, Any]]) -> str:
    """One compact JSON object per line (non-ASCII kept), each line ending in a newline."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


#: libyaml's loader and dumper where PyYAML was built with it (its wheels are): ~10x faster
#: to read and ~5x to write than the pure-Python ones, whose output they match
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def yaml_text(doc: Any) -> str:
    """A YAML document, keys in their order, non-ASCII kept."""
    return str(yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True))


def parse_yaml(text: str) -> Any:
    """Parse YAML text; a malformed one raises the pure-Python parser's error (its messages are
    the ones users see, whichever parser read the text first)."""
    try:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        if _LOADER is yaml.SafeLoader:
            raise
        return yaml.safe_load(text)


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; one clear error for a missing file or bad YAML."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config ({exc.strerror})") from None
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{loc}: invalid YAML ({problem})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: config must be a YAML mapping, got {type(data).__name__}")
    return data


__all__ = [
    "jsonable",
    "to_json",
    "atomic_open",
    "atomic_write",
    "iter_jsonl",
    "jsonl_text",
    "load_yaml",
    "parse_record",
    "parse_yaml",
    "read_json_object",
    "read_text",
    "yaml_text",
]
