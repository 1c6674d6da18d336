"""Probe client: what every in-app Python probe uses to send milestone events to the evaluator.

- The run's connection details (evaluator URL, secret, run id) come from a JSON file whose
  path is in MCPWORLD_PROBE_CONFIG; the file is deleted as soon as it is read, so the agent
  (which starts later) cannot read the secret from it.
- Events are buffered and numbered; a background thread sends them, drops them once
  acknowledged, and on a lost connection reconnects, authenticates again with the secret it
  holds, and resends every event the evaluator has not acknowledged (by sequence number).
- `paused()` closes the connection and parks every thread the client runs (its sender, and the
  websocket's reader and keepalive) until the block ends: for an app that runs code without Python's
  lock held while an operator runs (Blender's `bpy.ops` release the GIL, and file loading touches Python
  objects without it), no thread of ours may run Python meanwhile. Events emitted in the block wait.
- `held()` is the light form for every such operator: every event acknowledged, the sender held between
  two sends and the connection left open, so nothing is in flight to wake the websocket's reader.
- Depends only on the standard library and `websockets` (its threaded sync client).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import threading
import time
from collections import deque

from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect

CONFIG_ENV = "MCPWORLD_PROBE_CONFIG"
PR_SET_DUMPABLE = 4


def read_config(path: str | None = None) -> dict | None:
    """Read and delete the one-time run config; None when there is none (not under mcpworld). A process that
    holds one is made non-dumpable first: a program of the app's own user (one the app starts) cannot read
    the run's secret from its memory (/proc/<pid>/mem, ptrace), nor dump it in a core file."""
    path = path or os.environ.get(CONFIG_ENV)
    if not path or not os.path.exists(path):
        return None
    not_dumpable()
    try:
        with open(path) as f:
            cfg = json.load(f)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return cfg


def not_dumpable() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl (not Linux): nothing more to close
        pass


class ProbeClient:
    def __init__(self, url: str, token: str, run_id: str, app: str, source: str = "probe",
                 stream: str | None = None):
        self.url, self._token, self.run_id, self.app, self.source = url, token, run_id, app, source
        self.stream = stream or f"{app}-{source}-{os.getpid()}"
        self._seq = -1
        self._pending: deque[dict] = deque()  # emitted, not yet acknowledged
        self._cv = threading.Condition()
        self._closing = False
        self.connected = threading.Event()
        self.errors: list[str] = []
        self._pause = False
        self._gate = threading.Lock()  # held by the pausing thread; the sender waits on it, parked
        self._parked = threading.Event()
        self._hold = False
        self._hold_gate = threading.Lock()  # held by the holding thread; the sender waits on it
        self._held = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mcpworld-probe", daemon=True)
        self._thread.start()

    @classmethod
    def from_config(cls, cfg: dict, source: str = "probe") -> ProbeClient:
        return cls(cfg["url"], cfg["token"], cfg["run_id"], cfg["app"], source=source)

    def emit(self, name: str, payload: dict | None = None, ts: float | None = None) -> int:
        """Queue an event; `ts` is when it happened (default: now), e.g. a Frida hook's own clock reading."""
        with self._cv:
            self._seq += 1
            event = {"run_id": self.run_id, "source": self.source, "app": self.app, "name": name,
                     "payload": payload or {}, "seq": self._seq, "ts": ts if ts is not None else time.time()}
            self._pending.append(event)
            self._cv.notify()
            return self._seq

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every emitted event is acknowledged."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._pending and time.monotonic() < deadline:
                self._cv.wait(0.05)
            return not self._pending

    def close(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        with self._cv:
            self._closing = True
            self._cv.notify_all()
        self._thread.join(timeout)

    @contextlib.contextmanager
    def paused(self, timeout: float = 2.0):
        """Park the client's threads (connection closed) for the block; yields whether they parked in time."""
        self._gate.acquire()
        with self._cv:
            self._pause = True
            self._cv.notify_all()
        try:
            parked = self._parked.wait(timeout)
            if parked:
                time.sleep(0.005)  # the sender's last steps from "parked" into the gate's wait
            yield parked
        finally:
            self._pause = False
            self._gate.release()

    @contextlib.contextmanager
    def held(self, timeout: float = 1.0):
        """Every event acknowledged, then the sender held between two sends for the block, its connection
        open: with nothing in flight, the client's threads stay outside Python (but the websocket's
        keepalive ping, every 20 s). Yields whether it held; while unconnected there is nothing to hold."""
        self.flush(timeout)
        self._hold_gate.acquire()
        with self._cv:
            self._hold = True
            self._cv.notify_all()
        try:
            held = self.connected.is_set() and self._held.wait(timeout)
            if held:
                time.sleep(0.0005)  # the sender's last steps from "held" into the gate's wait
            yield held
        finally:
            self._hold = False
            self._hold_gate.release()

    def _park(self) -> None:
        self._parked.set()
        with self._gate:
            self._parked.clear()

    # -- sender thread ------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.05
        while not self._closing:
            if self._pause:
                self._park()
                continue
            try:
                with connect(self.url, open_timeout=5, close_timeout=1) as ws:
                    ws.send(json.dumps({"type": "hello", "token": self._token, "stream": self.stream,
                                        "source": self.source, "app": self.app}))
                    welcome = json.loads(ws.recv(timeout=5))
                    if welcome.get("type") != "welcome":
                        raise ConnectionError(f"not welcomed: {welcome}")
                    self._ack(int(welcome.get("acked", -1)))
                    self.connected.set()
                    backoff = 0.05
                    self._pump(ws)
                # paused or closing: the connection is closed; its reader and keepalive threads end first
                self.connected.clear()
                ws.wait_closed(2.0)
                keepalive = getattr(ws, "keepalive_thread", None)
                if keepalive is not None:
                    keepalive.join(2.0)
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError, ConnectionError, ValueError) as e:
                self.connected.clear()
                self.errors.append(f"{type(e).__name__}: {e}")
                del self.errors[:-20]
                if self._closing:
                    return
                time.sleep(backoff)
                backoff = min(backoff * 2, 1.0)

    def _pump(self, ws) -> None:
        sent = -1  # highest seq sent on this connection
        while True:
            if self._hold:
                self._held.set()
                with self._hold_gate:
                    self._held.clear()
            with self._cv:
                if (self._closing and not self._pending) or self._pause:
                    return
                if self._hold:
                    continue
                batch = [e for e in self._pending if e["seq"] > sent]
                if not batch:
                    # a new event wakes this at once; while sent ones await their acks, look for those often
                    self._cv.wait(0.002 if self._pending else 0.05)
            for e in batch:
                ws.send(json.dumps({"type": "event", "event": e}))
                sent = e["seq"]
            # read the acknowledgements that have arrived, never waiting for one: an event emitted
            # meanwhile would wait too (back to back, a 10 ms wait here was the p99 of probe latency)
            while True:
                try:
                    msg = json.loads(ws.recv(timeout=0))
                except TimeoutError:
                    break
                if msg.get("type") == "ack":
                    self._ack(int(msg["seq"]))

    def _ack(self, seq: int) -> None:
        with self._cv:
            while self._pending and self._pending[0]["seq"] <= seq:
                self._pending.popleft()
            self._cv.notify_all()
