"""Helpers for configs/ablation-offline.yaml: a loopback server playing three VLMs, and
local checkpoints for the `hf:` / `embed:` columns. Nothing is downloaded.

  python benchmarks/ablation_offline.py serve --port 8766 --descriptions .titjudge/offline/synth/descriptions.jsonl
  python benchmarks/ablation_offline.py models --out .titjudge/offline/models

`serve` runs the tests' fake OpenAI server (tests/doubles/server.py) with one responder
per model name, so the VLM rows really differ:
  vlm-sharp   the synthetic benchmark's stored description of each image;
  vlm-blurry  the same with every second sentence missing;
  vlm-glance  only the first two sentences;
any other model name (the LLM judge) answers judge requests by content-word overlap.
A VLM's LMM-score request is judged against that VLM's own description, Self-Eval against
the description it wrote. (`PYTHONPATH=tests python -m doubles.server --responder auto` serves
too, but every model name then describes alike and the server rows come out identical.)

`models` writes a tiny random-weight Qwen2.5-VL (an `hf:` describer row) and, for the
TIT-Score column, links the all-MiniLM-L6-v2 weights of the `demo` extra when installed
(else writes a tiny random Qwen3-Embedding there, whose scores are noise).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402, F401  (puts tests/ on sys.path for the doubles package)
from doubles.server import (  # noqa: E402
    AutoResponder,
    ChatRequest,
    DescribeResponder,
    FakeOpenAIServer,
    ImagePart,
    JudgeResponder,
    Reply,
    load_descriptions,
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class PartialDescriber(DescribeResponder):
    """A weaker VLM: keeps every `step`-th sentence, or only the first `first` sentences."""

    def __init__(self, descriptions: dict[str, str], step: int = 1, first: int | None = None):
        super().__init__(descriptions)
        self.step, self.first = step, first

    def description_for(self, image: ImagePart) -> str:
        sentences = _SENTENCE_END.split(super().description_for(image).strip())
        return " ".join(sentences[: self.first][:: self.step])


class OfflineGridResponder:
    """Route each request to the responder of its model name (see the module docstring)."""

    def __init__(self, descriptions: dict[str, str]):
        describers = {
            "vlm-sharp": PartialDescriber(descriptions),
            "vlm-blurry": PartialDescriber(descriptions, step=2),
            "vlm-glance": PartialDescriber(descriptions, first=2),
        }
        self.by_model = {
            name: AutoResponder(JudgeResponder(describer=d), d) for name, d in describers.items()
        }
        self.default = self.by_model["vlm-sharp"]

    def __call__(self, request: ChatRequest) -> Reply:
        return self.responder_for(request.model)(request)

    def responder_for(self, model: str) -> AutoResponder:
        return self.by_model.get(model.rsplit("/", 1)[-1], self.default)


async def serve(port: int, descriptions: Path) -> None:
    import signal

    server = FakeOpenAIServer(
        OfflineGridResponder(load_descriptions(descriptions)),
        port=port,
        models=("vlm-sharp", "vlm-blurry", "vlm-glance", "judge-llm"),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(await server.astart(), flush=True)
    try:
        await stop.wait()
    finally:
        await server.aclose()


def build_models(out: Path) -> None:
    from doubles.tiny_models import build_tiny_qwen3_embedding, build_tiny_qwen25_vl

    from titjudge.cli.demo import minilm_dir

    out.mkdir(parents=True, exist_ok=True)
    vl = out / "qwen2.5-vl-tiny"
    if not (vl / "config.json").is_file():
        build_tiny_qwen25_vl(vl)
    print(f"tiny random Qwen2.5-VL: {vl}")
    embedding = out / "embedding"
    if not embedding.exists():
        minilm = minilm_dir()
        if minilm is not None:
            embedding.symlink_to(minilm, target_is_directory=True)
        else:
            build_tiny_qwen3_embedding(embedding)
    kind = (
        "all-MiniLM-L6-v2"
        if embedding.is_symlink()
        else "tiny random Qwen3-Embedding (scores are noise)"
    )
    print(f"embedding model ({kind}): {embedding}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="serve three VLMs and a judge on 127.0.0.1")
    p.add_argument("--port", type=int, default=8766)
    p.add_argument(
        "--descriptions",
        type=Path,
        required=True,
        help="the synthetic benchmark's descriptions.jsonl",
    )
    p = sub.add_parser("models", help="write the local checkpoints the offline config names")
    p.add_argument("--out", type=Path, default=Path(".titjudge/offline/models"))
    args = parser.parse_args(argv)
    if args.command == "serve":
        asyncio.run(serve(args.port, args.descriptions))
    else:
        build_models(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
