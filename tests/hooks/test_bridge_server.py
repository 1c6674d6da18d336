"""The in-app bridge server (probe_runtime/bridge_server.py) over real loopback HTTP: methods run on the
app's main thread (here a thread draining a queue, as a GUI's event loop would), between the probe's
before/after re-reads, and the reply waits for the probe's flush; forged requests are refused and
reported."""

from __future__ import annotations

import json
import queue
import threading
import urllib.error
import urllib.request

import pytest

from gateway.net import free_port
from probe_runtime.bridge_server import BridgeError, BridgeServer


@pytest.fixture
def app():
    """A stand-in for an app's GUI thread, and a bridge that records what ran where and when."""
    posted: queue.Queue = queue.Queue()
    main = threading.Thread(target=lambda: [fn() for fn in iter(posted.get, None)], name="app-main", daemon=True)
    main.start()
    log: list = []

    def add(p):
        log.append(("add", threading.current_thread().name, bridge.in_call()))
        if p.get("n", 0) < 0:
            raise BridgeError("n must not be negative")
        return {"sum": p["n"] + 1}

    def boom(p):
        raise RuntimeError("the app broke")

    bridge = BridgeServer({"add": add, "boom": boom}, "s3cret", posted.put,
                          on_refused=lambda peer: log.append(("refused", peer)),
                          before_call=lambda m: log.append(("before", m, bridge.in_call())),
                          after_call=lambda m: log.append(("after", m, bridge.in_call())),
                          flush=lambda: log.append(("flush", threading.current_thread().name)))
    port = free_port()
    bridge.serve("127.0.0.1", port)
    yield f"http://127.0.0.1:{port}", log
    bridge.close()
    posted.put(None)


def _post(url: str, body, token: str = "s3cret") -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_call_runs_on_the_main_thread_between_the_probes_reads_and_answers_after_the_flush(app):
    url, log = app
    assert _post(url, {"method": "add", "params": {"n": 41}}) == (200, {"result": {"sum": 42}})
    assert log[0] == ("before", "add", False)
    assert log[1] == ("add", "app-main", True)
    assert log[2] == ("after", "add", True)
    assert log[3][0] == "flush" and log[3][1] != "app-main"


def test_errors_come_back_as_errors(app):
    url, _ = app
    assert _post(url, {"method": "add", "params": {"n": -1}}) == (200, {"error": "n must not be negative"})
    status, body = _post(url, {"method": "boom"})
    assert status == 200 and body["error"] == "RuntimeError: the app broke" and "Traceback" in body["trace"]
    status, body = _post(url, {"method": "run_python", "params": {"code": "1"}})
    assert "unknown method 'run_python'" in body["error"] and "add, boom" in body["error"]
    assert _post(url, b"{not json")[0] == 400
    assert _post(url, {"params": {}})[0] == 400


def test_a_request_without_the_secret_is_refused_reported_and_runs_nothing(app):
    url, log = app
    status, body = _post(url, {"method": "add", "params": {"n": 1}}, token="guess")
    assert status == 401 and body == {"error": "unauthorized"}
    assert [entry[0] for entry in log] == ["refused"] and log[0][1].startswith("127.0.0.1:")
