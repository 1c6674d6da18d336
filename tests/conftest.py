import pytest

from mcpworld.envs.local import LocalEnvironment


@pytest.fixture
async def env():
    """A real local environment: its own Xvfb display, xfwm4 and HOME."""
    e = LocalEnvironment()
    await e.open()
    yield e
    await e.close()


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
async def any_env(request):
    """The same tests on both backends: a local environment, or a container of the xfce image with Anki's layer."""
    if request.param == "local":
        e = LocalEnvironment()
    else:
        from mcpworld.envs.docker import DockerEnvironment
        e = DockerEnvironment("anki")
    await e.open()
    yield e
    await e.close()
