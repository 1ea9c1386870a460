"""`titjudge drift`: a pack's judges re-asked a fixed sample with the requests the run made.
Against the same deterministic server (now at another address, given by --set) nothing
changed: exit 0; against one whose replies name another model: exit 1, the model named;
against one whose scores moved: the changed scores and flipped verdicts counted."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer
from doubles.server_request import as_reply
from judges.judge_helpers import ModesResponder
from study_runs import packed_run

from titjudge.cli import main
from titjudge.records.item_line import ItemLine
from titjudge.study.drift import sample_items

pytestmark = pytest.mark.slow
JUDGES = [
    {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge"},
    {"name": "lexical", "kind": "lexical"},
    {"name": "pw", "kind": "pairwise", "model": "litellm:openai/judge"},
]


@pytest.fixture(scope="module")
def made(synth_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A pack of a real run (its server gone), and the data its responder reads."""
    pack, _, data = packed_run(synth_data, tmp_path_factory.mktemp("drift"), JUDGES, "sk-test-x1")
    return pack, data


def drift(pack: Path, url: str, capsys, n: int = 8) -> tuple[int, str]:
    """`titjudge drift` with both judges that ask a model pointed at `url`."""
    moved = [f"judges.{name}.api_base={url}" for name in ("tit_llm", "pw")]
    args = ["drift", str(pack), "--sample", str(n)]
    for override in moved:
        args += ["--set", override]
    code = main(args)
    return code, capsys.readouterr().out


def test_an_unchanged_server_is_no_drift(made, capsys, monkeypatch):
    pack, data = made
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeOpenAIServer(responder=ModesResponder(data)) as server:
        code, said = drift(pack, server.url, capsys)
        asked = server.stats.by_endpoint
    assert code == 0, said
    assert "no drift" in said and "tit_llm: 8 items re-asked; 0 scores changed" in said
    assert "lexical: 8 items re-asked; 0 scores changed" in said
    assert "estimate: tit_llm: 8 calls" in said
    # a pack of digests: the describer cannot be asked to look again, and says so
    assert (
        "not re-asked: describer (it looks at the image); a pack of digests holds no image" in said
    )
    assert "pw: " in said and "pairs re-asked; 0 verdicts changed; 0 new failures" in said
    assert sum(asked.values()) >= 8  # an empty cache: the calls were sent


def test_a_server_answering_as_another_model_is_drift(made, capsys, monkeypatch):
    pack, data = made
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    fair = ModesResponder(data)
    with FakeOpenAIServer(
        responder=lambda r: dataclasses.replace(as_reply(fair(r)), model="judge-v2")
    ) as server:
        code, said = drift(pack, server.url, capsys)
    assert code == 1
    assert "tit_llm: answered by judge-v2 now; the pack recorded judge" in said
    assert "pw: answered by judge-v2 now; the pack recorded judge" in said  # re-asked too


def test_moved_scores_are_counted_and_flips_tested(made, capsys, monkeypatch):
    pack, data = made
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    fair = ModesResponder(data)

    def lower(request):  # every LLM score one point lower: scores change, order kept
        reply = as_reply(fair(request))
        found = reply.data if isinstance(reply.data, dict) else None
        if found and "score" in found:
            return dataclasses.replace(reply, data={**found, "score": max(0, found["score"] - 1)})
        return reply

    with FakeOpenAIServer(responder=lower) as server:
        code, said = drift(pack, server.url, capsys, n=12)
    assert code == 1 and "tit_llm: 12 items re-asked;" in said
    assert "0 scores changed" not in said.split("tit_llm: 12 items re-asked;")[1].split("\n")[0]
    # the paired test on the scores: every score that moved moved down, so the shift is
    # systematic (12 items, each -1 or unchanged at 0)
    shift = re.search(
        r"tit_llm: (\d+) items scored then and now: mean change (-[\d.]+), "
        r"Wilcoxon signed-rank p ([\d.e-]+)",
        said,
    )
    assert shift is not None, said
    assert int(shift.group(1)) == 12 and float(shift.group(3)) < 0.01


def test_the_sample_is_fixed_and_stratified():
    lines = [
        ItemLine(item_id=f"{p}_{m}", prompt_id=p, t2i_model=m, variant="v", status="ok", score=1)
        for p in ("p1", "p2", "p3", "p4")
        for m in ("m1", "m2")
    ]
    prompts = {"p1": "a b", "p2": "a b c d", "p3": "a " * 20, "p4": "a " * 40}
    first = sample_items(lines, prompts, 4)
    assert first == sample_items(list(reversed(lines)), prompts, 4)  # the same every time
    assert {x.split("_")[1] for x in first} == {"m1", "m2"}  # every model in it


def test_bad_drift_input_is_one_line(made, capsys):
    pack, _ = made
    assert main(["drift", str(pack), "--sample", "100000"]) == 2
    assert "larger than the pack" in capsys.readouterr().err
    assert main(["drift", str(pack), "--sample", "2", "--set", "judges.nobody.model=x"]) == 2
    err = capsys.readouterr().err
    assert "nobody" in err and "Traceback" not in err


def test_a_budget_is_honoured_and_what_it_left_unsent_is_drift(made, capsys, monkeypatch):
    pack, data = made
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeOpenAIServer(responder=ModesResponder(data)) as server:
        code = main(
            [
                "drift",
                str(pack),
                "--sample",
                "8",
                "--set",
                f"judges.tit_llm.api_base={server.url}",
                "--set",
                f"judges.pw.api_base={server.url}",
                "--set",
                "judges.pw.price={input: 100000, output: 100000}",
                "--set",  # under a budget every model of the config needs a price, as for run
                "judges.tit_llm.price={input: 100000, output: 100000}",
                "--set",
                "describer.price={input: 0, output: 0}",
                "--set",
                "run.budget_usd=0.05",
            ]
        )
        sent = server.stats.by_endpoint
    said = capsys.readouterr().out
    assert code == 1 and "new failures" in said
    assert "0 new failures" not in said.split("tit_llm: 8 items re-asked;")[1].split("\n")[0]
    assert sum(sent.values()) < 8  # the budget stopped the sends before the sample's end


IMAGE_JUDGES = [
    {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge"},
    {"name": "yes", "kind": "lmm_yes"},  # the describer's own VLM, looking at the image
    {"name": "self", "kind": "self_eval"},  # the describer's own VLM, reading the description
]


@pytest.fixture(scope="module")
def with_images(synth_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A pack holding the images, of a run with a judge that looks at them."""
    made = packed_run(
        synth_data, tmp_path_factory.mktemp("drift-img"), IMAGE_JUDGES, "sk-test-x1", images=True
    )
    return made[0], made[2]


def drift_all(pack: Path, url: str, capsys, n: int = 8) -> tuple[int, str]:
    """`titjudge drift` with the describer and the text judge pointed at `url`."""
    args = ["drift", str(pack), "--sample", str(n), "--set", f"describer.api_base={url}"]
    code = main([*args, "--set", f"judges.tit_llm.api_base={url}"])
    return code, capsys.readouterr().out


def test_a_pack_with_images_asks_the_describer_and_the_image_judges_again(
    with_images, capsys, monkeypatch
):
    pack, data = with_images
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    responder = ModesResponder(data)
    with FakeOpenAIServer(responder=responder) as server:
        code, said = drift_all(pack, server.url, capsys)
    assert code == 0, said
    assert "describer: 8 images described again; 0 descriptions changed; 0 new failures" in said
    assert "yes: 8 items re-asked; 0 scores changed; 0 new failures" in said
    assert "tit_llm: 8 items re-asked; 0 scores changed" in said
    assert "not re-asked" not in said and "estimate: describer: 8 calls" in said
    # a describer-bound judge asks the describer's model: its calls are estimated as such
    assert "estimate: self: 8 calls to litellm:openai/vlm" in said
    assert "estimate: yes: 8 calls to litellm:openai/vlm" in said
    assert "self: 8 items re-asked; 0 scores changed; 0 new failures" in said
    # the packed images themselves were sent: one description and one P(yes) each
    assert responder.count("describe") == 8 and responder.count("yes") == 8


def test_a_describer_that_describes_differently_now_is_drift_while_the_judges_keep_their_requests(
    with_images, capsys, monkeypatch
):
    pack, data = with_images
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    fair = ModesResponder(data)

    def wordier(request):  # the describer adds a sentence; every judge's reply as before
        reply = as_reply(fair(request))
        if request.images and "PROMPT:" not in request.text:  # ModesResponder's describe
            return dataclasses.replace(reply, content=reply.content + " A cat sits in a corner.")
        return reply

    with FakeOpenAIServer(responder=wordier) as server:
        code, said = drift_all(pack, server.url, capsys)
    assert code == 1
    assert "describer: 8 images described again; 8 descriptions changed; 0 new failures" in said
    # each change shown from where the texts part: the sentence the describer added
    assert "from character " in said and "-> ' A cat sits in a corner.'" in said
    # the text judge was given the stored descriptions: the same requests, the same scores
    assert "tit_llm: 8 items re-asked; 0 scores changed; 0 new failures" in said
    assert "drift: the models answer differently now" in said
