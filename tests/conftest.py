import pytest

from mcpworld.envs.local import LocalEnvironment


@pytest.fixture
async def env():
    """A real local environment: its own Xvfb display, xfwm4 and HOME."""
    e = LocalEnvironment()
    await e.open()
    yield e
    await e.close()
