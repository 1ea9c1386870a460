"""The call mode (`models.core.clients.CallMode`: `SEND`, or a probe that sends nothing) is a
required keyword argument everywhere in src/: no function takes a `probe` with a default, none
takes it positionally, no annotation of it admits None, and no dataclass field holding it has a
default. So a judge (or any caller) that forgets to hand its mode on fails mypy and its tests,
instead of sending, and paying, during `titjudge estimate`. tests/agents/
test_estimate_sends_nothing.py checks the behaviour for every judge kind."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import titjudge

SRC = Path(titjudge.__file__).parent
#: the names the call mode goes by in signatures and fields
MODE_NAMES = ("probe",)
#: annotations that say a parameter or field holds the call mode
MODE_TYPES = ("CallMode", "Send")


def _functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield f"{path.relative_to(SRC.parent)}:{node.lineno} {node.name}", node


def _names(annotation: ast.expr | None) -> set[str]:
    """The names an annotation is made of (`CacheProbe | Send`: both)."""
    if annotation is None:
        return set()
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    return {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}


def _holds_mode(name: str, annotation: ast.expr | None) -> bool:
    return name in MODE_NAMES or bool(_names(annotation) & set(MODE_TYPES))


def _is_mode(arg: ast.arg) -> bool:
    return _holds_mode(arg.arg, arg.annotation)


def _constants(annotation: ast.expr | None) -> set[str]:
    """`None` where an annotation spells it as a constant (`CallMode | None`)."""
    if annotation is None:
        return set()
    return {"None" for n in ast.walk(annotation) if isinstance(n, ast.Constant) and n.value is None}


def _offences(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    positional = args.posonlyargs + args.args
    with_default = positional[len(positional) - len(args.defaults) :]
    found = []
    for arg in positional:
        if _is_mode(arg):
            found.append(f"{arg.arg}: positional (make it keyword-only, after `*`)")
            if arg in with_default:
                found.append(f"{arg.arg}: has a default")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if _is_mode(arg) and default is not None:
            found.append(f"{arg.arg}: has a default ({ast.unparse(default)})")
    for arg in [*positional, *args.kwonlyargs]:
        if _is_mode(arg) and "None" in _names(arg.annotation) | _constants(arg.annotation):
            found.append(f"{arg.arg}: its annotation admits None ({ast.unparse(arg.annotation)})")
    return found


def test_no_function_in_src_takes_the_call_mode_with_a_default_or_positionally():
    """`probe` names the call mode alone: a function that reads what a probe found takes it
    under another name (`run.estimate.summarise(counted, ...)`)."""
    offences = [
        f"{where}: {offence}" for where, node in _functions() for offence in _offences(node)
    ]
    assert offences == []


def test_no_dataclass_field_holds_the_call_mode_with_a_default():
    """`RunContext.probe` is `field(kw_only=True)`: a context that sends says so (`SEND`)."""
    offences = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                holds = _holds_mode(stmt.target.id, stmt.annotation)
                value = stmt.value
                defaulted = value is not None and not (
                    isinstance(value, ast.Call)
                    and ast.unparse(value.func) in ("field", "dataclasses.field")
                    and not {k.arg for k in value.keywords} & {"default", "default_factory"}
                )
                if holds and defaulted:
                    offences.append(f"{path.relative_to(SRC.parent)}:{stmt.lineno} {node.name}")
    assert offences == []


@pytest.mark.parametrize(
    ("source", "offence"),
    [
        ("def f(x, probe=None): ...", "probe: positional (make it keyword-only, after `*`)"),
        ("def f(x, *, probe: CallMode | None = None): ...", "probe: has a default (None)"),
        ("def f(x, *, mode: CallMode = SEND): ...", "mode: has a default (SEND)"),
        ("def f(x, *, probe: CallMode | None): ...", "probe: its annotation admits None"),
    ],
)
def test_the_check_finds_each_way_of_defaulting_the_mode(source, offence):
    """The rule itself: each shape the mode used to have (`probe: CallMode | None = None`),
    or could take, is found."""
    (node,) = ast.parse(source).body
    assert isinstance(node, ast.FunctionDef)
    assert any(found.startswith(offence) for found in _offences(node)), _offences(node)


def test_a_judge_that_forgets_its_mode_cannot_be_called():
    """At run time too: a judge's mode has no default, so a call that leaves it out raises
    before any request could be built."""
    from titjudge.judges.lexical import LexicalJudge, LexicalJudgeConfig
    from titjudge.records.items import Item
    from titjudge.records.outcomes import Described, JudgeInput

    item = Item("i", "p", "a red cube", Path("i.png"), "m")
    with pytest.raises(TypeError, match="probe"):
        judge = LexicalJudge(LexicalJudgeConfig(name="lexical", kind="lexical"))
        judge.judge(JudgeInput(item, None, Described(text="a red cube")))  # type: ignore[call-arg]
