"""The evaluator's websocket endpoint with real connections: auth, forgery, acks, reconnect and resend."""

import asyncio
import json
import os

import pytest
from websockets.asyncio.client import connect

from evaluator import events as ev
from evaluator.log import EventLog
from evaluator.server import Evaluator
from probe_runtime.client import ProbeClient, read_config


async def wait_for(cond, timeout=5.0):
    for _ in range(int(timeout / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


@pytest.fixture
async def evaluator(tmp_path):
    e = Evaluator("run1", "testapp", tmp_path / "events.jsonl")
    await e.start()
    yield e
    await e.stop()


def names(e):
    return [x.name for x in e.log.events]


async def test_probe_events_are_recorded_in_order_and_acknowledged(evaluator, tmp_path):
    client = ProbeClient(evaluator.url, evaluator.token, "run1", "testapp")
    for i in range(50):
        client.emit("thing_happened", {"i": i})
    assert await asyncio.to_thread(client.flush, 5.0)
    probe = [x for x in evaluator.log.events if x.source == "probe"]
    assert [x.payload["i"] for x in probe] == list(range(50))
    assert [x.seq for x in probe] == list(range(50))
    assert evaluator.probe_connected.is_set()
    # every acknowledged event is already in the file, before the evaluator stops
    on_disk = EventLog.read(tmp_path / "events.jsonl")
    assert [x.payload.get("i") for x in on_disk if x.source == "probe"] == list(range(50))
    await asyncio.to_thread(client.close)


async def test_wrong_token_is_refused_and_recorded_as_forgery(evaluator):
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": "guess", "stream": "evil", "source": "probe"}))
        await ws.send(json.dumps({"type": "event", "event": {"run_id": "run1", "source": "probe", "app": "testapp",
                                                             "name": "note_added", "payload": {}, "seq": 0}}))
        with pytest.raises(Exception):
            for _ in range(3):
                await asyncio.wait_for(ws.recv(), 2)
    await wait_for(lambda: ev.FORGERY in names(evaluator))
    assert "note_added" not in names(evaluator)
    forged = [x for x in evaluator.log.events if x.name == ev.FORGERY][0]
    assert forged.source == "runner" and forged.payload["reason"] == "wrong token"


async def test_event_before_hello_is_forgery(evaluator):
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "event", "event": {"name": "deck_added"}}))
        with pytest.raises(Exception):
            await asyncio.wait_for(ws.recv(), 2)
    await wait_for(lambda: ev.FORGERY in names(evaluator))
    assert "deck_added" not in names(evaluator)


async def test_authenticated_client_cannot_claim_runner_or_query_source(evaluator):
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": evaluator.token, "stream": "s", "source": "probe"}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "event", "event": {"run_id": "run1", "source": "query", "app": "testapp",
                                                             "name": "state", "payload": {"notes": []}, "seq": 0}}))
        await wait_for(lambda: ev.FORGERY in names(evaluator))
    assert "state" not in names(evaluator)


async def test_reconnect_resends_unacknowledged_events_without_duplicates(evaluator):
    client = ProbeClient(evaluator.url, evaluator.token, "run1", "testapp", stream="s1")
    client.emit("a", {})
    assert await asyncio.to_thread(client.flush, 5.0)
    # drop every connection from the server side, as a network blip or an evaluator hiccup would
    for conn in list(evaluator._server.connections):
        await conn.close()
    for i in range(5):
        client.emit("b", {"i": i})
    assert await asyncio.to_thread(client.flush, 10.0)
    probe = [x for x in evaluator.log.events if x.source == "probe"]
    assert [x.name for x in probe] == ["a"] + ["b"] * 5
    assert [x.seq for x in probe] == list(range(6))
    connects = [x for x in evaluator.log.events if x.name == ev.PROBE_CONNECTED]
    assert len(connects) >= 2  # authenticated again with the secret it holds
    await asyncio.to_thread(client.close)


async def test_resent_events_are_recorded_once(evaluator):
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": evaluator.token, "stream": "dup", "source": "probe"}))
        await ws.recv()
        event = {"run_id": "run1", "source": "probe", "app": "testapp", "name": "x", "payload": {}, "seq": 0}
        for _ in range(3):
            await ws.send(json.dumps({"type": "event", "event": event}))
            assert json.loads(await ws.recv()) == {"type": "ack", "seq": 0}
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": evaluator.token, "stream": "dup", "source": "probe"}))
        assert json.loads(await ws.recv())["acked"] == 0  # tells the client what it already has
    assert names(evaluator).count("x") == 1


def test_run_config_file_is_deleted_once_read(tmp_path, monkeypatch):
    path = tmp_path / "probe-run.json"
    path.write_text(json.dumps({"url": "ws://x", "token": "t", "run_id": "r", "app": "a"}))
    monkeypatch.setenv("MCPWORLD_PROBE_CONFIG", str(path))
    assert read_config()["token"] == "t"
    assert not path.exists()
    assert read_config() is None


def test_torn_last_line_is_skipped(tmp_path):
    log = EventLog(tmp_path / "e.jsonl")
    from evaluator.events import Event
    log.append(Event(run_id="r", source="probe", app="a", name="n", seq=0))
    log.close()
    with open(tmp_path / "e.jsonl", "a") as f:
        f.write('{"v": 1, "run_id": "r", "sour')
    assert [e.name for e in EventLog.read(tmp_path / "e.jsonl")] == ["n"]
    os.remove(tmp_path / "e.jsonl")


async def test_quiet_counts_from_the_agents_end(tmp_path):
    """A last event older than the gap says nothing about what the agent's last call set off: the wait
    counts from the agent's end at the earliest."""
    import time as _time

    from evaluator.server import Evaluator

    ev = Evaluator("run", "app", tmp_path / "events.jsonl")
    ev.record_internal("runner", "old", {})
    ev.log.events[-1].received = _time.time() - 10
    t = _time.perf_counter()
    await ev.quiet(0.3, 3.0)
    assert _time.perf_counter() - t < 0.25  # nothing to wait for without `since`
    t = _time.perf_counter()
    await ev.quiet(0.3, 3.0, since=_time.time())
    assert _time.perf_counter() - t >= 0.29
    ev.log.close()
