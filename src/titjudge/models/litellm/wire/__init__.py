"""The direct send path of `litellm:` models at OpenAI-compatible endpoints: the request
litellm would send, built and posted by titjudge on one pooled aiohttp session per endpoint,
its reply and errors read as the litellm path reads them. No litellm import."""
