"""What the fake OpenAI server answers: the built-in responders and their input files.

A responder is any callable `responder(request: ChatRequest) -> Reply` (it may also return
a plain `str` (text), a `dict`/`list` (JSON), a `Fault`, or an awaitable of these). The
built-in ones are deterministic so tests can hand-compute what a judge or describer says:

- `echo`: the text of the last user message.
- `describe`: a ~250-word description derived from the image's sha256, or the stored
  one from a descriptions JSONL file (`{"image_sha256": ..., "description": ...}`).
- `judge`: finds the PROMPT and DESCRIPTION sections and scores their content-word
  Jaccard overlap (see `JudgeResponder`; content words are defined in `server_text`),
  shaped to the request's JSON schema, or `{"reason": ..., "score": 0-100}` without one.
- `scripted`: canned replies in order.
- `auto`: judge when the sections are present, describe when an image is, else echo.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from doubles.server_request import (
    BadRequest,
    ChatRequest,
    Fault,
    ImagePart,
    Reply,
    Responder,
    ScriptExhausted,
    as_reply,
)
from doubles.server_text import (
    describe_from_hash,
    fill_schema,
    jaccard,
    jaccard_rationale,
    scaled,
)
from titjudge.errors import ConfigError, DataError, did_you_mean


def echo_responder(request: ChatRequest) -> Reply:
    """Answer with the last user message's text, unchanged."""
    return Reply(content=request.text)


def load_descriptions(path: str | Path) -> dict[str, str]:
    """Read `{"image_sha256": ..., "description": ...}` lines; a bad line is a DataError naming it."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"{path}: cannot read descriptions file ({exc.strerror})") from None
    found: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        sha, text = (
            (row.get("image_sha256"), row.get("description"))
            if isinstance(row, dict)
            else (None, None)
        )
        if not isinstance(sha, str) or not isinstance(text, str):
            raise DataError(
                f"{path}:{number}: expected an object with string 'image_sha256' and 'description'"
            )
        found[sha] = text
    return found


class DescribeResponder:
    """Describe the first image: the stored description for its sha256, else one derived from it."""

    def __init__(self, descriptions: Mapping[str, str] | None = None, words: int = 250):
        self.descriptions = dict(descriptions or {})
        self.words = words
        #: description text (stripped) -> the image it describes, stored or served so far
        self._images = {text.strip(): sha for sha, text in self.descriptions.items()}

    def description_for(self, image: ImagePart) -> str:
        stored = self.descriptions.get(image.sha256)
        text = stored if stored is not None else describe_from_hash(image.sha256, self.words)
        self._images.setdefault(text.strip(), image.sha256)
        return text

    def image_of(self, section: str) -> str | None:
        """The sha256 of the image whose description `section` is, or starts with up to a
        line break (a judge template may put its instructions after the description), among
        those loaded from the descriptions file or described so far; None for a text it
        never knew."""
        found = self._images.get(section.strip())
        cut = section.find("\n")
        while found is None and cut != -1:
            found = self._images.get(section[:cut].strip())
            cut = section.find("\n", cut + 1)
        return found

    def __call__(self, request: ChatRequest) -> Reply:
        if not request.images:
            raise BadRequest("describe responder: the request has no image to describe")
        return Reply(content=self.description_for(request.images[0]))


#: line-start headings, so "the prompt:" inside a sentence does not count
DEFAULT_PROMPT_MARKER = r"(?im)^[ \t#*>]*prompt[ \t*]*:[ \t*]*"
DEFAULT_DESCRIPTION_MARKER = r"(?im)^[ \t#*>]*description[ \t*]*:[ \t*]*"


class JudgeResponder:
    """Score how well a DESCRIPTION matches a PROMPT by content-word overlap, as JSON.

    Sections: the text after the first match of `prompt_marker` / `description_marker`
    (regexes; default: a line starting with 'PROMPT:' / 'DESCRIPTION:', case-insensitive)
    up to the next match of any marker (or of `end_marker`) or the end. They are looked
    for in the last user message, then in the whole conversation. With a prompt but no
    description and an image present (an LMM-score request), the image's description
    from `describer` stands in. Score = round(Jaccard(content words) * (hi - lo) + lo),
    with lo/hi the schema's minimum/maximum (default 0/100).
    """

    def __init__(
        self,
        prompt_marker: str = DEFAULT_PROMPT_MARKER,
        description_marker: str = DEFAULT_DESCRIPTION_MARKER,
        end_marker: str | None = None,
        describer: DescribeResponder | None = None,
    ):
        try:
            self.markers = [re.compile(p) for p in (prompt_marker, description_marker)]
            self.end = re.compile(end_marker) if end_marker else None
        except re.error as exc:
            raise ConfigError(f"judge responder: invalid marker regex ({exc})") from None
        self.describer = describer or DescribeResponder()

    def sections(self, text: str) -> tuple[str | None, str | None]:
        """(prompt, description) found in `text`; None for a missing one."""
        starts = [
            m.start()
            for rx in [*self.markers, *([self.end] if self.end else [])]
            for m in rx.finditer(text)
        ]
        found: list[str | None] = []
        for rx in self.markers:
            match = rx.search(text)
            if match is None:
                found.append(None)
                continue
            stop = min((s for s in starts if s >= match.end()), default=len(text))
            found.append(text[match.end() : stop].strip())
        return found[0], found[1]

    def texts(self, request: ChatRequest) -> tuple[str | None, str | None]:
        prompt, description = self.sections(request.text)
        if prompt is None or description is None:
            prompt, description = self.sections(request.all_text)
        if description is None and request.images:
            description = self.describer.description_for(request.images[0])
        return prompt, description

    def __call__(self, request: ChatRequest) -> Reply:
        prompt, description = self.texts(request)
        if prompt is None or description is None:
            missing = "PROMPT" if prompt is None else "DESCRIPTION"
            raise BadRequest(
                f"judge responder: no {missing} section found (marker regex {self.markers[prompt is not None].pattern!r})"
            )
        try:
            unit = jaccard(prompt, description)
        except ValueError:
            raise BadRequest(
                "judge responder: neither the PROMPT nor the DESCRIPTION has a content word"
            ) from None
        rationale = jaccard_rationale(prompt, description)
        schema = request.json_schema
        if schema is None:
            return Reply(data={"reason": rationale, "score": scaled(unit, 0.0, 100.0)})
        return Reply(data=fill_schema(schema, schema, {"jaccard": unit, "rationale": rationale}))


class ScriptedResponder:
    """Canned replies in order; with `cycle` it starts over, else running out is an error."""

    def __init__(self, replies: Iterable[Any], cycle: bool = False):
        self._all = [as_reply(r) for r in replies]
        self._queue = deque(self._all)
        self._lock = threading.Lock()
        self.cycle = cycle

    def __call__(self, request: ChatRequest) -> Reply:
        with self._lock:
            if not self._queue and self.cycle and self._all:
                self._queue.extend(self._all)
            if not self._queue:
                raise ScriptExhausted(
                    f"scripted responder has no replies left (it had {len(self._all)})"
                )
            return self._queue.popleft()


def load_script(path: str | Path) -> list[Reply]:
    """Read a replies JSONL: `{"content": str}`, `{"json": any}` or `{"fault": kind, ...}` per line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"{path}: cannot read script file ({exc.strerror})") from None
    replies: list[Reply] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict) or len({"content", "json", "fault"} & row.keys()) != 1:
            raise DataError(f"{path}:{number}: expected exactly one of 'content', 'json', 'fault'")
        if "fault" in row:
            options = {
                k: row[k] for k in ("retry_after", "delay", "message", "variant") if k in row
            }
            try:
                replies.append(Reply(fault=Fault(str(row["fault"]), **options)))
            except ConfigError as exc:
                raise DataError(f"{path}:{number}: {exc}") from None
        else:
            replies.append(
                Reply(content=str(row["content"])) if "content" in row else Reply(data=row["json"])
            )
    return replies


class AutoResponder:
    """Judge when PROMPT and DESCRIPTION (or an image) are present, describe an image, else echo."""

    def __init__(self, judge: JudgeResponder, describe: DescribeResponder):
        self.judge = judge
        self.describe = describe

    def __call__(self, request: ChatRequest) -> Reply:
        prompt, description = self.judge.texts(request)
        if prompt is not None and description is not None:
            return self.judge(request)
        if request.images:
            return self.describe(request)
        return echo_responder(request)


def request_item(responder: Responder, request: ChatRequest) -> tuple[str | None, str | None]:
    """(image sha256, PROMPT-section sha256) of the item a chat request is about, for the
    request log: a judge request (PROMPT and DESCRIPTION found, by an auto or judge
    responder's markers) names the image whose description it carries (as the describer
    loaded or served it; else the request's own image, else None) and its prompt's hash;
    any other request names its first image, prompt None. Ties a judge call to the describe
    call it follows from."""
    judge = responder.judge if isinstance(responder, AutoResponder) else responder
    own = request.images[0].sha256 if request.images else None
    if isinstance(judge, JudgeResponder):
        prompt, description = judge.texts(request)
        if prompt is not None and description is not None:
            image = judge.describer.image_of(description) or own
            return image, hashlib.sha256(prompt.encode()).hexdigest()
    return own, None


RESPONDERS = ("auto", "echo", "describe", "judge", "scripted")


def build_responder(
    name: str,
    descriptions: Mapping[str, str] | None = None,
    script: Iterable[Any] | None = None,
    prompt_marker: str = DEFAULT_PROMPT_MARKER,
    description_marker: str = DEFAULT_DESCRIPTION_MARKER,
    end_marker: str | None = None,
) -> Responder:
    """A built-in responder by name; an unknown name is a ConfigError with a hint."""
    describe = DescribeResponder(descriptions)
    if name == "echo":
        return echo_responder
    if name == "describe":
        return describe
    judge = JudgeResponder(prompt_marker, description_marker, end_marker, describe)
    if name == "judge":
        return judge
    if name == "auto":
        return AutoResponder(judge, describe)
    if name == "scripted":
        if script is None:
            raise ConfigError("the 'scripted' responder needs replies (--script FILE)")
        return ScriptedResponder(script)
    raise ConfigError(
        f"unknown responder {name!r}{did_you_mean(name, RESPONDERS)}; known: {', '.join(RESPONDERS)}"
    )
