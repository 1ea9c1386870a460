"""How each self-hosted server takes a JSON schema, and how it refuses a shape it does not take:
the fake server's `server=` (`FakeOpenAIServer(server="llama_cpp_python")`).

Every rule is the server's documented or coded behaviour as worked through, with sources, in
docs/research/server-dialects.md:

- `openai` (the default): `response_format` of type text, json_object or json_schema; the
  schema at `json_schema.schema` (OpenAI's structured-outputs guide).
- `llama_cpp_python` (0.3.x; abetlen/llama-cpp-python `llama_types.py`
  `ChatCompletionRequestResponseFormat`: `type: Literal["text", "json_object"]`,
  `schema: NotRequired[JsonType]`; its `server/errors.py` `RouteErrorHandler` answers a
  request-validation error with HTTP 500 and `{"error": {"message": str(error), "type":
  "internal_server_error", "param": null, "code": null}}`): json_schema is refused so; the
  schema at `response_format.schema` of a json_object. The reply echoes the request's model.
- `llama_server` (llama.cpp's `tools/server/server-common.cpp` `oaicompat_chat_params_parse`
  after PR #9527): json_object takes `schema`, json_schema takes `json_schema.schema`; another
  type is 400 `{"error": {"code": 400, "message": "response_format type must be one of
  \\"text\\" or \\"json_object\\", but got: X", "type": "invalid_request_error"}}`.
- `ollama` (0.5 and later; ollama/ollama `openai/openai.go`: json_object becomes `format:
  "json"`, json_schema its `json_schema.schema`, any other type is ignored with HTTP 200);
  replies carry `system_fingerprint: "fp_ollama"` and echo the request's model.
- `vllm` (0.10.2 to 0.11; vllm-project/vllm `entrypoints/openai/protocol.py` `ResponseFormat`
  `type: Literal["text", "json_object", "json_schema"]`, the 400 its `RequestValidationError`
  handler writes, `{"error": {"message", "type": "Bad Request", "param", "code": 400}}`): the
  schema from `json_schema.schema`, the extra body's `structured_outputs.json` (PR #22772,
  0.10.2) or `guided_json` (deprecated, removed in 0.12).
- `tgi` (Hugging Face text-generation-inference 3.3; `router/src/lib.rs` L225-258 and
  L927-932: `response_format: Option<GrammarType>`, a serde enum tagged `type` with its content
  under `value`: `json` (alias `json_object`) takes the schema itself, `json_schema` takes
  `{name, schema}`, `regex` a pattern; the guidance docs send `{"type": "json_object", "value":
  <schema>}`). A body that does not deserialize is refused by axum's `Json` extractor: HTTP
  422, text/plain `Failed to deserialize the JSON body into the target type: response_format:
  <serde's message> at line L column C` (docs/research/server-dialects.md, 5b). The reply
  echoes the request's model.
"""

from __future__ import annotations

from typing import Any

SERVERS = ("openai", "llama_cpp_python", "llama_server", "ollama", "vllm", "tgi")
#: TGI's `GrammarType` variants (`type`), each with its content under `value`
TGI_TYPES = ("json", "json_object", "regex", "json_schema")

#: llama-cpp-python's 500 message under FastAPI < 0.124 (`str(RequestValidationError)`)
LLAMA_CPP_REFUSAL = (
    "[{{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': '{kind}', 'ctx': {{'expected': \"'text' "
    "or 'json_object'\"}}}}]"
)

_TAKES = {
    "openai": ("text", "json_object", "json_schema"),
    "llama_cpp_python": ("text", "json_object"),
    "llama_server": ("text", "json_object", "json_schema"),
    "vllm": ("text", "json_object", "json_schema"),
}


def tgi_refusal(fmt: Any) -> str | None:
    """The serde message TGI's extractor gives for `response_format` (None: it deserializes)."""
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or "type" not in fmt:
        return "missing field `type`"
    if fmt["type"] not in TGI_TYPES:
        expected = ", ".join(f"`{t}`" for t in TGI_TYPES)
        return f"unknown variant `{fmt['type']}`, expected one of {expected}"
    if "value" not in fmt:
        return "missing field `value`"
    return None


def refusal(server: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str] | None:
    """(status, JSON body, or a text body) of `server`'s refusal of the request's
    response_format; None when it takes it."""
    fmt = body.get("response_format")
    if server == "tgi":
        said = tgi_refusal(fmt)
        if said is None:
            return None
        column = len(str(body))  # where serde stopped: somewhere in the one-line body
        return 422, (
            "Failed to deserialize the JSON body into the target type: response_format: "
            f"{said} at line 1 column {column}"
        )
    kind = str(fmt.get("type", "text")) if isinstance(fmt, dict) else "text"
    if server == "ollama" or kind in _TAKES[server]:
        return None  # Ollama ignores a type it does not know
    if server == "llama_cpp_python":
        message = LLAMA_CPP_REFUSAL.format(kind=kind)
        return 500, {
            "error": {
                "message": message,
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        }
    if server == "llama_server":
        message = f'response_format type must be one of "text" or "json_object", but got: {kind}'
        return 400, {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}
    if server == "vllm":
        message = (
            "1 validation error for ChatCompletionRequest\nresponse_format.type\n  Input should "
            f"be 'text', 'json_object' or 'json_schema' [type=literal_error, input_value='{kind}']"
        )
        return 400, {
            "error": {"message": message, "type": "Bad Request", "param": None, "code": 400}
        }
    message = (
        f"Invalid value: '{kind}'. Supported values are: 'json_object', 'json_schema', and 'text'."
    )
    return 400, {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "response_format.type",
            "code": "invalid_value",
        }
    }


def schema_of(server: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The schema `server` constrains the reply to (None: none, or any JSON)."""
    fmt = body.get("response_format")
    fmt = fmt if isinstance(fmt, dict) else {}
    found: Any = None
    if server == "tgi":
        value = fmt.get("value")
        if fmt.get("type") == "json_schema" and isinstance(value, dict):
            value = value.get("schema")
        return value if fmt.get("type") != "regex" and isinstance(value, dict) else None
    if fmt.get("type") == "json_schema" and server != "llama_cpp_python":
        wrapper = fmt.get("json_schema")
        found = wrapper.get("schema") if isinstance(wrapper, dict) else None
    elif fmt.get("type") == "json_object" and server in ("llama_cpp_python", "llama_server"):
        found = fmt.get("schema")
    if found is None and server == "vllm":
        outputs = body.get("structured_outputs")
        found = outputs.get("json") if isinstance(outputs, dict) else body.get("guided_json")
    return found if isinstance(found, dict) else None


def fingerprint(server: str) -> str | None:
    """The `system_fingerprint` a server's replies carry (None: the fake's own)."""
    return "fp_ollama" if server == "ollama" else None
