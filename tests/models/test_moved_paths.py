"""The module paths from before `titjudge.models` was split into sub-packages (issue 23) still
import, as the very module at its new home, with a DeprecationWarning that names the new path;
the names a custom backend needs import from `titjudge.models` itself."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from titjudge.models._moved import MOVED

# the modules as they were before the split (git show 708bfdb:src/titjudge/models)
BEFORE_THE_SPLIT = sorted(
    "base call embed embed_plan embed_st embedding_client execution hf hf_generate hf_plan hub "
    "images keys lazy limits litellm_backend litellm_embed litellm_embed_settings litellm_reply "
    "litellm_router litellm_settings local_common options pacing pipeline preflight "
    "provenance provider_schema ray_actors ray_backend ray_session registry replay results "
    "spec structured thinking token_estimate".split()
)
STAYED = {"hub", "preflight", "registry"}
LIGHT = sorted(set(MOVED) - {"hf", "hf_generate", "embed", "embed_st", "ray_actors"})


def test_every_module_from_before_the_split_has_a_home() -> None:
    assert sorted(set(MOVED) | STAYED) == BEFORE_THE_SPLIT


@pytest.mark.parametrize("old", LIGHT)
def test_an_old_path_imports_the_module_at_its_new_home(old: str) -> None:
    new = importlib.import_module(MOVED[old])
    sys.modules.pop(f"titjudge.models.{old}", None)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        aliased = importlib.import_module(f"titjudge.models.{old}")
    assert aliased is new


@pytest.mark.slow
def test_from_imports_of_old_paths_and_public_names() -> None:
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "from titjudge.models import TextBackend, ModelOptions, ModelHub, parse_model_spec\n"
        "from titjudge.models.core.base import TextBackend as T\n"
        "assert TextBackend is T\n"
        "try:\n"
        "    from titjudge.models.litellm_backend import LiteLLMBackend\n"
        "except DeprecationWarning as exc:\n"
        "    print(exc)\n"
        "import sys; print('litellm' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "titjudge.models.litellm_backend moved to titjudge.models.litellm.backend; "
        "import it from there"
    )
    # the public names import without litellm; only the old backend path (refused here as a
    # warning turned error) would have loaded it
    assert lines[1] == "False"


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import titjudge.models

    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        titjudge.models.nonsense  # noqa: B018
