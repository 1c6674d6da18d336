import pytest

from mcpworld.envs import DOCKER, LOCAL, make_environment
from mcpworld.envs.local import LocalEnvironment


@pytest.fixture
async def env():
    """A real local environment: its own Xvfb display, xfwm4 and HOME."""
    e = LocalEnvironment()
    await e.open()
    yield e
    await e.close()


@pytest.fixture(params=[LOCAL, pytest.param(DOCKER, marks=pytest.mark.docker)])
async def any_env(request):
    """The same tests on every backend: a local environment, or a container of the bare xfce desktop image."""
    e = make_environment(request.param)
    await e.open()
    yield e
    await e.close()
