"""The one path from a request to the provider's body, made without sending it.

litellm's own request transformation (`litellm.utils.return_raw_request`, which stops before
the network call) turns the arguments titjudge's backend passes to `litellm.acompletion` into
the provider's URL, headers and JSON body. `titjudge explain` shows it; batch lines
(`models.litellm.batch.api`) are made of it, so an online call and a batch line cannot differ.
"""

from __future__ import annotations

from typing import Any, Protocol

from titjudge.models.core.base import GenerateRequest, PermanentError
from titjudge.models.litellm.loaded import litellm_module


class BuildsKwargs(Protocol):
    def request_kwargs(self, request: GenerateRequest) -> dict[str, Any]: ...


def raw_request(backend: BuildsKwargs, request: GenerateRequest) -> dict[str, Any]:
    """litellm's account of what it would send for `request`: `raw_request_api_base`,
    `raw_request_headers`, `raw_request_body`, or `error` when it would not build it."""
    kwargs = backend.request_kwargs(request)
    kwargs.pop("api_key", None)  # return_raw_request passes its own stand-in
    if isinstance(kwargs.get("api_base"), list):
        kwargs["api_base"] = kwargs["api_base"][0]
    litellm = litellm_module()
    from litellm.types.utils import CallTypes
    from litellm.utils import return_raw_request

    # litellm logs the request it captures as a curl command and runs its secret-redacting
    # regexes over it: with an image inlined that is most of the cost (0.85 s a line for a
    # 0.9 MB body, measured), for a log line titjudge never reads. No await in between, so
    # no other call of this event loop sees the setting.
    before = litellm.turn_off_message_logging
    litellm.turn_off_message_logging = True
    try:
        return dict(return_raw_request(CallTypes.completion, kwargs))
    finally:
        litellm.turn_off_message_logging = before


def built(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` (litellm's account of a request), or a PermanentError naming why litellm would
    not build it: a batch line cannot be made of a request the online call could not send."""
    if raw.get("error"):
        raise PermanentError(
            f"litellm would not build this request: {str(raw['error']).splitlines()[0]}"
        )
    return raw


__all__ = ["BuildsKwargs", "built", "raw_request"]
