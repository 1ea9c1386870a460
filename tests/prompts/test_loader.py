import pytest

from titjudge.errors import ConfigError
from titjudge.prompts.loader import available_templates, load_template, parse_template

PAPER = (
    "Please provide a detailed, single-paragraph description of the image in English, "
    "using between 250 and 350 words."
)


def test_paper_describer_instruction_is_verbatim():
    template = load_template("describe_paper")
    assert template.render() == (None, PAPER)
    assert template.variables == frozenset()


def test_judge_templates_render_and_keep_braces_in_values():
    for name in ("judge_similarity", "judge_paper"):
        system, user = load_template(name).render(prompt="a {red} cat", description="a cat }{")
        assert "a {red} cat" in user and "a cat }{" in user
        assert "PROMPT:" in user and "DESCRIPTION:" in user
    assert "semantic similarity score between two texts" in load_template("judge_paper").user


def test_missing_and_extra_variables():
    template = load_template("judge_similarity")
    with pytest.raises(ConfigError, match="needs description"):
        template.render(prompt="x")
    with pytest.raises(ConfigError, match="does not use image"):
        template.render(prompt="x", description="y", image="z")


def test_unknown_template_suggests():
    with pytest.raises(ConfigError, match="did you mean 'judge_paper'"):
        load_template("judge_papr")
    assert {"describe_paper", "judge_paper", "judge_similarity", "lmm_score"} <= set(
        available_templates()
    )


def test_hash_changes_with_text_and_user_files(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text(
        "version: 2\nrole: judge\n---\n[system]\nBe strict.\n[user]\nP: {prompt}\nD: {description}\n"
    )
    mine = load_template(str(path))
    assert (mine.name, mine.version, mine.system) == ("mine", "2", "Be strict.")
    other = parse_template("mine", path.read_text().replace("strict", "lenient"))
    assert other.sha256 != mine.sha256


def test_header_required():
    with pytest.raises(ConfigError, match="header"):
        parse_template("x", "no header here")
    with pytest.raises(ConfigError, match="version"):
        parse_template("x", "role: judge\n---\ntext")
