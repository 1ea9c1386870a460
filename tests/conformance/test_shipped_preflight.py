"""The shipped configs (configs/*.yaml) meet the preflight as users run them: with no keys in
the environment `titjudge run` and `titjudge ablation` stop with exit 2 and one line naming
every missing key, before any run dir is written or any request reaches the provider stand-in;
with the keys set (fake values) and the checkpoints in the Hugging Face cache the preflight
passes; a config handed to the other command says which command it is for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from titjudge.cli import main

REPO = Path(__file__).resolve().parents[2]
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY")
#: the hub ids the shipped configs name (paper-grid.yaml and local-qwen.yaml)
HUB_IDS = (
    "Qwen/Qwen2.5-VL-7B-Instruct",
    "Qwen/Qwen2.5-VL-32B-Instruct",
    "Qwen/Qwen2.5-VL-72B-Instruct",
    "Qwen/Qwen3-Embedding-8B",
    "Qwen/Qwen3-Embedding-4B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B",
)


@pytest.fixture(scope="module")
def data(synthetic) -> Path:
    return synthetic(2, 3, seed=3)


@pytest.fixture
def hf_cache(tmp_path, monkeypatch) -> Path:
    """An empty Hugging Face cache, downloads off: no hub id is there unless a test puts it."""
    import huggingface_hub.constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


@pytest.fixture
def no_keys(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


def cache_checkpoint(cache: Path, repo_id: str) -> None:
    """The cache's own layout: models--org--name/refs/main -> snapshots/<commit>/config.json."""
    repo, commit = cache / f"models--{repo_id.replace('/', '--')}", "0" * 40
    (repo / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit / "config.json").write_text(json.dumps({}))


def cli(capsys, command: str, config: str, tmp: Path, *sets: str, data: Path | None = None):
    args = [command, str(REPO / "configs" / config), "--set", f"run.out={tmp / 'runs'}"]
    args += ["--set", f"run.cache_dir={tmp / 'cache'}"]
    if data is not None:
        args += ["--set", f"data.manifest={data / 'manifest.jsonl'}"]
        args += ["--set", f"data.human_pairs={data / 'pairs.csv'}"]
    else:  # no data: a config the preflight passes stops at the manifest instead
        args += ["--set", f"data.manifest={tmp / 'no-manifest.jsonl'}"]
    for value in sets:
        args += ["--set", value]
    code = main(args)
    return code, capsys.readouterr().err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


PAPER_GRID_BASES = (
    "describers.gemini-25-pro.api_base={gemini}",
    "describers.gpt-4o.api_base={openai}",
    "comparers.tit_llm_g.api_base={gemini}",
)


def bases(server, templates: tuple[str, ...]) -> list[str]:
    return [t.format(gemini=server.gemini_base, openai=server.openai_base) for t in templates]


@pytest.mark.parametrize(
    ("command", "config", "sets", "named"),
    [
        (
            "run",
            "tit-llm-gemini.yaml",
            (
                "describer.api_base={gemini}",
                "judges.tit_llm_g.api_base={gemini}",
                "judges.tit_llm_g_paper.api_base={gemini}",
            ),
            [
                "GEMINI_API_KEY not set (litellm:gemini/gemini-2.5-pro: describer, judges "
                "tit_llm_g, tit_llm_g_paper)"
            ],
        ),
        (
            "run",
            "tit-llm-gpt4o.yaml",
            ("describer.api_base={openai}", "judges.tit_llm_4o.api_base={openai}"),
            ["OPENAI_API_KEY not set (litellm:openai/gpt-4o: describer, judge tit_llm_4o)"],
        ),
        (
            "run",
            "local-qwen.yaml",
            (),
            [
                "(hf:Qwen/Qwen2.5-VL-7B-Instruct: describer, judges self_eval, lmm_score)",
                "(embed:Qwen/Qwen3-Embedding-8B: judge tit_score)",
                "(hf:Qwen/Qwen3-8B: judge tit_llm_q8b)",
            ],
        ),
        (
            "ablation",
            "paper-grid.yaml",
            PAPER_GRID_BASES,
            [
                "GEMINI_API_KEY not set (litellm:gemini/gemini-2.5-pro: row gemini-25-pro, "
                "comparer tit_llm_g)",
                "OPENAI_API_KEY not set (litellm:openai/gpt-4o: row gpt-4o)",
                *(f"(hf:{hub}: row " for hub in HUB_IDS[:3]),
                "(embed:Qwen/Qwen3-Embedding-8B: comparer tit_score_8b)",
                "(hf:Qwen/Qwen3-14B: comparer tit_llm_q14b)",
            ],
        ),
        (
            "ablation",
            "ablation-offline.yaml",
            (),
            [
                "no model folder at .titjudge/offline/models/qwen2.5-vl-tiny",
                "no model folder at .titjudge/offline/models/embedding",
            ],
        ),
    ],
)
def test_shipped_config_without_keys_stops_before_anything(
    command,
    config,
    sets,
    named,
    provider_server,
    data,
    hf_cache,
    no_keys,
    tmp_path,
    capsys,
    monkeypatch,
):
    # relative paths (the offline recipe's .titjudge/offline/...) resolve in a folder of the
    # test's own, not in a checkout where someone ran that recipe
    monkeypatch.chdir(tmp_path)
    code, err = cli(capsys, command, config, tmp_path, *bases(provider_server, sets), data=data)
    line = one_line(err)
    assert code == 2 and "preflight found" in line and "nothing was called" in line
    for part in named:
        assert part in line
    assert line.count(" problem") == 1  # one summary, every problem on the same line
    assert not (tmp_path / "runs").exists()  # no run dir, no ablation tables
    assert provider_server.requests == []


def test_keyless_paper_grid_no_longer_walks_its_rows(
    provider_server, data, hf_cache, no_keys, tmp_path, capsys
):
    """The issue's case: no keys, every checkpoint cached. It used to walk all five rows, write
    empty tables and exit 1; now exit 2 naming both keys, and no row starts."""
    for hub in HUB_IDS:
        cache_checkpoint(hf_cache, hub)
    out = tmp_path / "grid"
    sets = bases(provider_server, PAPER_GRID_BASES)
    code, err = cli(
        capsys, "ablation", "paper-grid.yaml", tmp_path, *sets, f"run.out={out}", data=data
    )
    line = one_line(err)
    assert code == 2
    assert line.endswith(
        "preflight found 2 problems, nothing was called: GEMINI_API_KEY not set "
        "(litellm:gemini/gemini-2.5-pro: row gemini-25-pro, comparer tit_llm_g); "
        "OPENAI_API_KEY not set (litellm:openai/gpt-4o: row gpt-4o)"
    )
    assert not out.exists() and provider_server.requests == []


@pytest.mark.parametrize(
    ("command", "config"),
    [
        ("run", "tit-llm-gemini.yaml"),
        ("run", "tit-llm-gpt4o.yaml"),
        ("run", "local-qwen.yaml"),
        ("run", "vllm-qwen.yaml"),  # a local server: no key at all
        ("run", "vllm-replicas.yaml"),  # two local servers per model
        ("ablation", "paper-grid.yaml"),
    ],
)
def test_with_keys_and_cached_checkpoints_the_preflight_passes(
    command, config, hf_cache, monkeypatch, tmp_path, capsys
):
    """Fake keys and cached configs: the preflight finds no model problem, only the data, which
    is missing here (named in the same line since issue 30; nothing is called either way)."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSy-fake-preflight")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-preflight")
    for hub in HUB_IDS:
        cache_checkpoint(hf_cache, hub)
    code, err = cli(capsys, command, config, tmp_path)
    line = one_line(err)
    assert code == 2 and "no-manifest.jsonl: manifest not found (data.manifest)" in line
    assert not any(backend in line for backend in ("litellm:", "hf:", "embed:"))


@pytest.mark.slow
def test_unknown_provider_is_refused_before_any_item(
    provider_server, data, monkeypatch, tmp_path, capsys
):
    """It used to fail every item at call time (exit 1) with a run dir of failures; a `--set`
    swap to it is refused as the config loads, before the preflight."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-preflight")
    code, err = cli(
        capsys,
        "run",
        "tit-llm-gpt4o.yaml",
        tmp_path,
        f"describer.api_base={provider_server.openai_base}",
        "judges.tit_llm_4o.model=litellm:nosuchprovider/x",
        data=data,
    )
    assert code == 2
    assert one_line(err).endswith(
        "judges.tit_llm_4o.model litellm:nosuchprovider/x: unknown litellm provider "
        "'nosuchprovider'"
    )
    assert not (tmp_path / "runs").exists() and provider_server.requests == []


def test_score_runs_the_preflight_too(provider_server, data, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-preflight")
    image = next((data / "images").rglob("*.png"))
    code = main(
        [
            "score",
            str(image),
            "a cat",
            "--config",
            str(REPO / "configs" / "tit-llm-gpt4o.yaml"),
            "--set",
            f"describer.api_base={provider_server.openai_base}",
            "--set",
            "judges.tit_llm_4o.model=litellm:nosuchprovider/x",
            "--set",
            f"run.cache_dir={tmp_path / 'cache'}",
        ]
    )
    line = one_line(capsys.readouterr().err)
    assert code == 2 and "unknown litellm provider 'nosuchprovider'" in line
    assert provider_server.requests == []


@pytest.mark.parametrize(
    ("command", "config", "message"),
    [
        (
            "ablation",
            "tit-llm-gemini.yaml",
            "tit-llm-gemini.yaml is a run config (it has describer, judges); use titjudge run ",
        ),
        (
            "run",
            "paper-grid.yaml",
            "paper-grid.yaml is an ablation config (it has describers, comparers, bootstrap); "
            "use titjudge ablation ",
        ),
    ],
)
def test_a_config_for_the_other_command_says_which(command, config, message, tmp_path, capsys):
    path = str(REPO / "configs" / config)
    code, err = cli(capsys, command, config, tmp_path)
    line = one_line(err)
    assert code == 2 and f"{path}{message[len(config) :]}{path}" in line
