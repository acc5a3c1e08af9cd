"""The `server` fixture: an `iobm serve` with known keys over a new directory."""

import pytest

from gateway_helpers import AK, SK, Server


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--access-key", AK, "--secret-key", SK)
    yield s
    s.stop()
