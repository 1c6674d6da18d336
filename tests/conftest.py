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


# Seconds per test file, printed after pytest's last line: a CI log that keeps only its head and tail still
# tells where the hour went (--durations lists single tests, in the middle of the log).
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_unconfigure(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not _FILE_SECONDS:
        return
    top = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1])[:12]
    total = sum(_FILE_SECONDS.values())
    parts = [f"{p.removeprefix('tests/').removesuffix('.py')} {s / 60:.1f}" for p, s in top]
    reporter.write_line(f"minutes by test file (of {total / 60:.1f}): " + ", ".join(parts))
