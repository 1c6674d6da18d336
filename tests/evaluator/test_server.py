"""The evaluator's websocket endpoint with real connections: auth, forgery, acks, reconnect and resend."""

import asyncio
import json
import linecache
import os
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

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


def names(e):
    return [x.name for x in e.log.events]


async def test_probe_events_are_recorded_in_order_and_acknowledged(evaluator, tmp_path):
    client = ProbeClient(evaluator.url, evaluator.credential("probe"), "run1", "testapp")
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
        await ws.send(json.dumps({"type": "hello", "token": evaluator.credential("probe"), "stream": "s", "source": "probe"}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "event", "event": {"run_id": "run1", "source": "query", "app": "testapp",
                                                             "name": "state", "payload": {"notes": []}, "seq": 0}}))
        await wait_for(lambda: ev.FORGERY in names(evaluator))
    assert "state" not in names(evaluator)


async def test_reconnect_resends_unacknowledged_events_without_duplicates(evaluator):
    client = ProbeClient(evaluator.url, evaluator.credential("probe"), "run1", "testapp", stream="s1")
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


async def test_paused_client_closes_its_connection_parks_its_threads_and_loses_nothing(evaluator):
    """Blender runs file loads with Python's lock released: while paused, no thread of the client may run."""
    import sys
    import threading

    client = ProbeClient(evaluator.url, evaluator.credential("probe"), "run1", "testapp", stream="s1")
    client.emit("before", {})
    assert await asyncio.to_thread(client.flush, 5.0)

    def in_block():
        with client.paused() as parked:
            assert parked
            client.emit("during", {})
            time.sleep(0.3)  # nothing may be sent while paused
            sender = sys._current_frames()[client._thread.ident]
            extra = [t.name for t in threading.enumerate() if t not in (client._thread, threading.main_thread(),
                                                                        threading.current_thread())]
            return sender.f_code.co_name, extra, len(evaluator._server.connections)

    where, extra, open_conns = await asyncio.to_thread(in_block)
    assert where == "_park"  # waiting on the gate, outside Python
    assert extra == [], extra  # the websocket's reader and keepalive threads have ended
    assert open_conns == 0
    assert [x.name for x in evaluator.log.events if x.source == "probe"] == ["before"]
    assert await asyncio.to_thread(client.flush, 5.0)
    probe = [x for x in evaluator.log.events if x.source == "probe"]
    assert [x.name for x in probe] == ["before", "during"] and [x.seq for x in probe] == [0, 1]
    await asyncio.to_thread(client.close)


async def test_held_client_keeps_its_connection_sends_nothing_and_loses_nothing(evaluator):
    """Blender's every bridge call: what was emitted is acknowledged first, then the sender waits outside
    Python with the connection open, and what is emitted meanwhile goes after."""
    import sys

    client = ProbeClient(evaluator.url, evaluator.credential("probe"), "run1", "testapp", stream="s1")
    assert await asyncio.to_thread(client.connected.wait, 5.0)
    client.emit("before", {})  # not yet acknowledged: held() waits for it

    def in_block():
        with client.held() as held:
            recorded = [x.name for x in evaluator.log.events if x.source == "probe"]
            client.emit("during", {})
            time.sleep(0.3)  # nothing may be sent while held
            sender = sys._current_frames()[client._thread.ident]
            return held, recorded, sender.f_code.co_name, sender.f_lineno, len(evaluator._server.connections)

    held, recorded, where, line, open_conns = await asyncio.to_thread(in_block)
    assert held and recorded == ["before"]
    assert where == "_pump" and "_hold_gate" in linecache.getline(sys.modules[ProbeClient.__module__].__file__, line)
    assert open_conns == 1
    assert [x.name for x in evaluator.log.events if x.source == "probe"] == ["before"]
    assert await asyncio.to_thread(client.flush, 5.0)
    probe = [x for x in evaluator.log.events if x.source == "probe"]
    assert [x.name for x in probe] == ["before", "during"] and [x.seq for x in probe] == [0, 1]
    assert [x.name for x in evaluator.log.events].count(ev.PROBE_CONNECTED) == 1  # the same connection
    await asyncio.to_thread(client.close)


async def test_resent_events_are_recorded_once(evaluator):
    token = evaluator.credential("probe")
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "stream": "dup", "source": "probe"}))
        await ws.recv()
        event = {"run_id": "run1", "source": "probe", "app": "testapp", "name": "x", "payload": {}, "seq": 0}
        for _ in range(3):
            await ws.send(json.dumps({"type": "event", "event": event}))
            assert json.loads(await ws.recv()) == {"type": "ack", "seq": 0}
    async with connect(evaluator.url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "stream": "dup", "source": "probe"}))
        assert json.loads(await ws.recv())["acked"] == 0  # tells the client what it already has
    assert names(evaluator).count("x") == 1


async def hello(evaluator, token, stream="s", source="probe"):
    """A raw connection's hello; the evaluator's first answer, or None when it refused the connection (closed
    it with 4003, "refused"). Any other outcome (a silence, another close) raises."""
    ws = await connect(evaluator.url)
    await ws.send(json.dumps({"type": "hello", "token": token, "stream": stream, "source": source}))
    try:
        return ws, json.loads(await asyncio.wait_for(ws.recv(), 30))
    except ConnectionClosed as e:
        assert e.rcvd is not None and (e.rcvd.code, e.rcvd.reason) == (4003, "refused"), e
        return ws, None


def forgery_reasons(evaluator):
    return [x.payload["reason"] for x in evaluator.log.events if x.name == ev.FORGERY]


async def test_a_credential_speaks_for_one_source_only(evaluator):
    probe = evaluator.credential("probe")
    ws, answer = await hello(evaluator, probe, source="frida")
    assert answer is None
    await wait_for(lambda: forgery_reasons(evaluator) == ["a probe credential speaking as another source"])
    ws, answer = await hello(evaluator, probe, stream="p")
    assert answer["type"] == "welcome"
    frida_event = {"run_id": "run1", "source": "frida", "app": "testapp", "name": "hooked", "payload": {}, "seq": 0}
    await ws.send(json.dumps({"type": "event", "event": frida_event}))
    await wait_for(lambda: len(forgery_reasons(evaluator)) == 2)
    assert "hooked" not in names(evaluator)
    await ws.close()


async def test_a_connected_credential_cannot_be_used_twice_and_stays_on_its_stream(evaluator):
    """A stolen credential is refused while its process is connected, and cannot open another stream; the
    real client goes on, and after a dropped connection it reconnects with the same credential."""
    token = evaluator.credential("probe")
    real = ProbeClient(evaluator.url, token, "run1", "testapp", stream="anki-probe-1")
    real.emit("a", {})
    assert await asyncio.to_thread(real.flush, 5.0)
    _, answer = await hello(evaluator, token, stream="anki-probe-1")
    assert answer is None
    _, answer = await hello(evaluator, token, stream="thief")
    assert answer is None
    await wait_for(lambda: len(forgery_reasons(evaluator)) == 2)
    assert forgery_reasons(evaluator) == ["a second connection with a credential already connected",
                                          "a credential already pinned to another stream"]
    for conn in list(evaluator._server.connections):  # a network blip: the real one comes back
        await conn.close()
    real.emit("b", {})
    assert await asyncio.to_thread(real.flush, 10.0)
    assert [x.name for x in evaluator.log.events if x.source == "probe"] == ["a", "b"]
    await asyncio.to_thread(real.close)


async def test_a_fresh_credential_cannot_take_over_a_pinned_stream(evaluator):
    evaluator_first = evaluator.credential("probe")
    ws, answer = await hello(evaluator, evaluator_first, stream="anki-probe-1")
    assert answer["type"] == "welcome"
    await ws.close()
    ws, answer = await hello(evaluator, evaluator.credential("probe"), stream="anki-probe-1")
    assert answer is None
    await wait_for(lambda: forgery_reasons(evaluator) == ["a stream another credential holds"])


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
    # without `since` nothing is waited for: it returns before an event due well within the limit lands
    later = asyncio.get_running_loop().call_later(2.0, ev.record_internal, "runner", "later", {})
    await ev.quiet(0.3, 3.0)
    assert [e.name for e in ev.log.events] == ["old"]
    later.cancel()
    # with it, the gap counts from the agent's end: the wait ends no earlier than `since` + gap
    since = _time.time()
    await ev.quiet(0.3, 3.0, since=since)
    assert _time.time() >= since + 0.3
    ev.log.close()


async def test_malformed_frames_and_wrong_types_are_recorded_and_the_stream_goes_on(evaluator):
    ws, answer = await hello(evaluator, evaluator.credential("probe"), stream="p")
    assert answer["type"] == "welcome"
    for bad in ("{not json", "[1, 2]", json.dumps({"type": "event", "event": {"name": 5, "seq": "x"}}),
                json.dumps({"type": "event", "event": None})):
        await ws.send(bad)
    good = {"run_id": "run1", "source": "probe", "app": "testapp", "name": "fine", "payload": {}, "seq": 0}
    await ws.send(json.dumps({"type": "event", "event": good}))
    assert json.loads(await asyncio.wait_for(ws.recv(), 5)) == {"type": "ack", "seq": 0}
    errors = [x for x in evaluator.log.events if x.name == ev.SOURCE_ERROR]
    assert len(errors) == 4 and all("malformed event" in x.payload["error"] for x in errors)
    assert "fine" in names(evaluator)
    await ws.close()
    raw = await connect(evaluator.url)
    await raw.send("{not json")
    await wait_for(lambda: "malformed message before authentication" in forgery_reasons(evaluator))


async def test_a_flood_of_connections_and_giant_frames_costs_the_real_probe_nothing(evaluator, monkeypatch):
    """Hundreds of connections that never say hello, and frames over the size limit, are turned away or cut
    off and recorded (a bounded number of records); the real probe's events all arrive."""
    from evaluator import server

    monkeypatch.setattr(server, "HELLO_TIMEOUT", 3.0)
    monkeypatch.setattr(server, "MAX_UNAUTHENTICATED", 20)
    real = ProbeClient(evaluator.url, evaluator.credential("probe"), "run1", "testapp", stream="real")
    real.emit("before", {})
    assert await asyncio.to_thread(real.flush, 5.0)
    giant = await connect(evaluator.url, max_size=None)
    await giant.send("x" * (server.MAX_FRAME + 1))
    idle = await asyncio.gather(*(connect(evaluator.url) for _ in range(server.MAX_UNAUTHENTICATED + 50)),
                                return_exceptions=True)
    for i in range(20):
        real.emit("during", {"i": i})
    assert await asyncio.to_thread(real.flush, 10.0)
    await wait_for(lambda: "a frame over the size limit before authentication" in forgery_reasons(evaluator))
    await wait_for(lambda: "too many connections waiting to authenticate" in forgery_reasons(evaluator))
    await wait_for(lambda: forgery_reasons(evaluator).count("no hello within the time allowed") >= 19)
    assert [x.payload.get("i") for x in evaluator.log.events if x.name == "during"] == list(range(20))
    assert len(forgery_reasons(evaluator)) <= 20 + 10  # the idle ones, a few flood notes, the giant frame
    for ws in idle:
        if not isinstance(ws, BaseException):
            await ws.close()
    await asyncio.to_thread(real.close)


async def test_an_earlier_runs_events_replayed_are_refused(evaluator, tmp_path):
    """events.jsonl of another run, sent back with a credential of this one: every event claims another run."""
    other = Evaluator("run0", "testapp", tmp_path / "old.jsonl")
    await other.start()
    old = ProbeClient(other.url, other.credential("probe"), "run0", "testapp", stream="old")
    old.emit("note_added", {"id": 1})
    assert await asyncio.to_thread(old.flush, 5.0)
    await asyncio.to_thread(old.close)
    await other.stop()
    ws, answer = await hello(evaluator, evaluator.credential("probe"), stream="p")
    for e in EventLog.read(tmp_path / "old.jsonl"):
        await ws.send(json.dumps({"type": "event", "event": e.model_dump(mode="json", exclude={"stream", "received"})}))
    await wait_for(lambda: len(forgery_reasons(evaluator)) >= 1)
    assert "note_added" not in names(evaluator)
    await ws.close()
