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


@pytest.fixture
def issued_credentials(monkeypatch) -> list[str]:
    """Every evaluator credential issued during the test, to look for in what an agent could see."""
    from evaluator.server import Evaluator

    issued: list[str] = []
    credential = Evaluator.credential
    monkeypatch.setattr(Evaluator, "credential", lambda self, source: issued.append(credential(self, source)) or issued[-1])
    return issued
