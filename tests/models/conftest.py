import pytest
from doubles.server import FakeOpenAIServer


@pytest.fixture
def server():
    with FakeOpenAIServer(responder="auto") as srv:
        yield srv
