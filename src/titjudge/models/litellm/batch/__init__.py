"""Each provider's batch API behind one interface (`api`: the dispatch, and OpenAI and Azure
through litellm's files and batches); Anthropic's Message Batches (`anthropic`, its wire
format in `anthropic_wire`), Gemini's (`gemini`) and Vertex AI's (`vertex`) over HTTP;
embedding lines (`embed`) and the batch price (`price`). Every line's body is made by
`models.litellm.raw` from the online call's request."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
