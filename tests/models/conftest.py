import pytest

from titjudge.testing.server import FakeOpenAIServer


@pytest.fixture
def server():
    with FakeOpenAIServer(responder="auto") as srv:
        yield srv
