"""What the local backends (`hf:`, `embed:`) share: checkpoint lookup, device and dtype,
option checking, and releasing a closed model's memory. The micro-batcher is in `batching`.

torch and transformers are imported inside functions: importing this module is cheap.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from titjudge.errors import ConfigError, ModelSpecError, did_you_mean
from titjudge.records.spec import ModelSpec

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)
ResultT = TypeVar("ResultT")

_DTYPES = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}


def quiet_third_party_bars() -> None:
    """Switch off the tqdm bars transformers and huggingface_hub print while loading weights
    ("Loading weights", "Loading checkpoint shards", downloads): the run shows its own
    progress. transformers' switch turns off huggingface_hub's bars as well."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def quiet_gguf_bar() -> None:
    """Switch off the bar transformers prints while it dequantizes a GGUF file: it comes
    from tqdm directly, which the switch above does not reach."""
    import functools

    from transformers import modeling_gguf_pytorch_utils as gguf_loading

    bar = getattr(gguf_loading, "tqdm", None)
    if bar is not None and not isinstance(bar, functools.partial):
        gguf_loading.tqdm = functools.partial(bar, disable=True)


# --------------------------------------------------------------------------- checkpoints


@dataclass(frozen=True)
class Checkpoint:
    """Where weights come from: a local folder, or a hub id (resolved from the HF cache)."""

    source: str
    local: bool
    revision: str | None = None
    #: a hub id found in the local Hugging Face cache: load it without touching the network
    local_files_only: bool = False
    #: the hub snapshot (commit hash) actually loaded, for the run record
    commit: str | None = None
    #: a GGUF file in `source` (a local folder) that holds config, tokenizer and weights:
    #: transformers reads it (`gguf_file=`), dequantizing the weights
    gguf_file: str | None = None

    def load_kwargs(self) -> dict[str, Any]:
        """What every `from_pretrained` call for this checkpoint needs."""
        found: dict[str, Any] = {
            "revision": self.revision,
            "local_files_only": self.local_files_only,
        }
        if self.gguf_file is not None:
            found["gguf_file"] = self.gguf_file
        return found


def _looks_like_path(model_id: str) -> bool:
    """Hub ids are `name` or `org/name`; anything else written like a path is a path."""
    return model_id.startswith(("/", ".", "~", "\\")) or model_id.count("/") > 1 or ":" in model_id


def resolve_checkpoint(spec: ModelSpec, revision: str | None = None) -> Checkpoint:
    """A local folder (must hold config.json), a local `.gguf` file or a hub id; a missing
    folder or file names the path."""
    path = Path(spec.model_id).expanduser()
    if path.exists():
        if path.is_file() and path.suffix.lower() == ".gguf":
            resolved = path.resolve()
            return Checkpoint(str(resolved.parent), local=True, gguf_file=resolved.name)
        if not path.is_dir():
            raise ModelSpecError(
                f"{spec}: {path} is a file; expected a model folder holding config.json, "
                "or a .gguf file"
            )
        if not (path / "config.json").is_file():
            raise ModelSpecError(
                f"{spec}: {path} has no config.json; expected a transformers checkpoint folder"
            )
        return Checkpoint(str(path.resolve()), local=True)
    if _looks_like_path(spec.model_id):
        raise ModelSpecError(f"{spec}: no model folder at {path}")
    return Checkpoint(spec.model_id, local=False, revision=revision)


def load_config(
    spec: ModelSpec, checkpoint: Checkpoint, trust_remote_code: bool = False
) -> tuple[Any, Checkpoint]:
    """`AutoConfig` for the checkpoint, and the checkpoint as it will be loaded.

    A hub id already in the Hugging Face cache is served from there with no network call
    (and so no update check: the cached snapshot is what runs, its commit is recorded);
    otherwise it is fetched from the hub. Failures become one clear `ModelSpecError`.
    """
    from transformers import AutoConfig

    if not checkpoint.local:
        cached = replace(checkpoint, local_files_only=True)
        try:
            config = AutoConfig.from_pretrained(
                cached.source, trust_remote_code=trust_remote_code, **cached.load_kwargs()
            )
        except (OSError, ValueError, KeyError):
            pass  # not cached (or cached incompletely): try the hub below
        else:
            return config, replace(cached, commit=_snapshot_commit(cached))
    try:
        config = AutoConfig.from_pretrained(
            checkpoint.source, trust_remote_code=trust_remote_code, **checkpoint.load_kwargs()
        )
    except (OSError, ValueError, KeyError) as exc:
        where_from = (
            checkpoint.source
            if checkpoint.local
            else f"{checkpoint.source!r} (not a local folder; looked in the Hugging Face cache and hub)"
        )
        raise ModelSpecError(
            f"{spec}: cannot load model config from {where_from}: {first_line(exc)}"
        ) from None
    return config, replace(checkpoint, commit=_snapshot_commit(checkpoint))


def _snapshot_commit(checkpoint: Checkpoint) -> str | None:
    """The commit of the cached snapshot a hub id resolved to (None for local folders)."""
    if checkpoint.local:
        return None
    from transformers.utils.hub import cached_file, extract_commit_hash

    path = cached_file(
        checkpoint.source,
        "config.json",
        revision=checkpoint.revision,
        local_files_only=True,
        _raise_exceptions_for_missing_entries=False,
        _raise_exceptions_for_connection_errors=False,
    )
    return extract_commit_hash(path, None)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, for one-line errors."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cache_hint(checkpoint: Checkpoint) -> str:
    """For a hub id whose config is cached but whose other files are not."""
    if not checkpoint.local_files_only:
        return ""
    return f" (the Hugging Face cache holds only part of it; fetch it with: hf download {checkpoint.source})"


#: the first transformers release whose GGUF reader keeps a file's added tokens whole
#: (`<think>`, marked user-defined by llama.cpp); earlier ones split them, so the same
#: prompt tokenizes otherwise than from the model's folder (measured: 5.17.0 does, 5.18.0 not)
GGUF_TRANSFORMERS = "5.18.0"


def check_gguf_support(spec: ModelSpec) -> None:
    """Refuse a `.gguf` checkpoint, in one line, under a transformers that reads it wrongly."""
    from importlib.metadata import version

    from packaging.version import Version

    found = version("transformers")
    if Version(found) < Version(GGUF_TRANSFORMERS):
        raise ModelSpecError(
            f"{spec}: reading a .gguf file needs transformers >= {GGUF_TRANSFORMERS} (this is "
            f"{found}, whose GGUF reader splits the file's added tokens such as <think>); "
            "upgrade it with: pip install -U transformers"
        )


def weights_fingerprint(checkpoint: Checkpoint) -> str | None:
    """A cheap identity for a local folder (config text + weight file names and sizes), or
    for a GGUF file (its name and size)."""
    if not checkpoint.local:
        return None
    root = Path(checkpoint.source)
    if checkpoint.gguf_file is not None:
        size = (root / checkpoint.gguf_file).stat().st_size
        return hashlib.sha256(f"gguf:{checkpoint.gguf_file}:{size}".encode()).hexdigest()[:16]
    digest = hashlib.sha256((root / "config.json").read_bytes())
    for weight in sorted(root.glob("*.safetensors")) + sorted(root.glob("*.bin")):
        digest.update(f"{weight.name}:{weight.stat().st_size}".encode())
    return digest.hexdigest()[:16]


# --------------------------------------------------------------------------- device / dtype


def resolve_device(spec: ModelSpec, option: str | None) -> torch.device:
    """'auto'/None -> cuda if available, else mps, else cpu; an unavailable device is a ConfigError."""
    import torch

    name = (option or "auto").strip().lower()
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(
            f"{spec}: unknown device {option!r}; use 'auto', 'cpu', 'cuda', 'cuda:1' or 'mps'"
        ) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"{spec}: device {option!r} requested but torch sees no CUDA GPU")
    if (
        device.type == "cuda"
        and device.index is not None
        and device.index >= torch.cuda.device_count()
    ):
        raise ConfigError(
            f"{spec}: device {option!r} requested but only {torch.cuda.device_count()} GPU(s) exist"
        )
    return device


def resolve_dtype(spec: ModelSpec, option: str | None, device: torch.device) -> torch.dtype:
    """bf16 on GPUs that support it (else fp16), fp32 on CPU, unless the option names one."""
    import torch

    name = (option or "auto").strip().lower()
    if name == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float16 if device.type == "mps" else torch.float32
    if name not in _DTYPES:
        raise ConfigError(
            f"{spec}: unknown dtype {option!r}{did_you_mean(name, _DTYPES)}; use auto, bfloat16, float16 or float32"
        )
    return getattr(torch, _DTYPES[name])


def check_params(
    spec: ModelSpec, params: Mapping[str, Any], allowed: Mapping[str, type | tuple[type, ...]]
) -> dict[str, Any]:
    """Reject unknown or mistyped `params` keys: a silently ignored option is a wrong result."""
    checked: dict[str, Any] = {}
    for key, value in params.items():
        if key not in allowed:
            raise ConfigError(
                f"{spec}: unknown params key {key!r}{did_you_mean(key, allowed)}; "
                f"the '{spec.backend}:' backend accepts {', '.join(sorted(allowed))}"
            )
        kinds = allowed[key]
        ok = isinstance(value, kinds) and not (
            isinstance(value, bool) and bool not in _as_tuple(kinds)
        )
        if not ok:
            names = "/".join(k.__name__ for k in _as_tuple(kinds))
            raise ConfigError(f"{spec}: params.{key} must be {names}, got {value!r}")
        checked[key] = value
    return checked


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA/MPS allocation failures (torch raises OutOfMemoryError or a RuntimeError)."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def with_torch_threads(run: Callable[..., ResultT]) -> Callable[..., ResultT]:
    """Wrap `run` so the worker thread uses the torch thread count of the thread that built it.

    A new thread's OpenMP pool ignores `torch.set_num_threads` called elsewhere; on a busy
    CPU, oversubscribed threads make small ops many times slower.
    """
    import torch

    threads = torch.get_num_threads()

    def run_with_threads(*args: Any) -> ResultT:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        return run(*args)

    return run_with_threads


def free_accelerator_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def release_model(holder: object, attribute: str) -> None:
    """Drop `holder.<attribute>` (a closed backend's model) and give its memory back now.

    A model that nothing else holds is freed by its reference count; one caught in a reference
    cycle (a sentence-transformers model and its model card refer to each other) waits for a
    full garbage collection, which is run here only then: its cost grows with every object
    the process holds, not with the model.
    """
    model = getattr(holder, attribute, None)
    setattr(holder, attribute, None)
    if model is not None:
        try:
            alive: Callable[[], object] = weakref.ref(model)
        except TypeError:  # no weak references to it: collect to be sure
            alive = lambda: True  # noqa: E731
        del model
        if alive() is not None:
            gc.collect()
    free_accelerator_memory()
