"""The evaluator's websocket endpoint: authenticates probes, records their events, acknowledges them.

Wire protocol (JSON text frames):
  client -> {"type": "hello", "token": T, "stream": S, "source": "probe", "app": A}
  server -> {"type": "welcome", "acked": N}   # highest seq of stream S already recorded; resend the rest
  client -> {"type": "event", "event": {...Event...}}
  server -> {"type": "ack", "seq": N}

Each credential (`credential(source)`) is issued for one source and is pinned to the first stream that
says it; it may reconnect (a dropped connection resends what was not acknowledged) but never holds two
connections at once, speak as another source, or open another stream. A process the runner starts
again gets a fresh credential. A wrong or misused credential, an event before hello, or an event for
another run or source is refused, recorded as a `suspected_forgery` runner event, and the connection
is closed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from evaluator import events as ev
from evaluator.events import CLIENT_SOURCES, Event, Source
from evaluator.log import EventLog

Listener = Callable[[Event], None]
MAX_FRAME = 8 * 1024 * 1024     # bytes; a bigger frame closes the connection (recorded)
MAX_UNAUTHENTICATED = 256       # connections waiting for their hello at once; more are turned away (recorded)
HELLO_TIMEOUT = 5.0


@dataclass
class Credential:
    source: str
    stream: str | None = None                  # pinned by the first hello
    conn: ServerConnection | None = None       # the live connection, if any


def _key(token: str) -> bytes:
    # credentials are looked up by a digest, so the lookup's timing says nothing about the tokens
    return hashlib.sha256(token.encode()).digest()


class Evaluator:
    """Owns the event log and the websocket server for one trial."""

    def __init__(self, run_id: str, app: str, log_path: Path):
        self.run_id, self.app = run_id, app
        self._credentials: dict[bytes, Credential] = {}
        self._pinned: dict[str, Credential] = {}  # stream -> its credential
        self._waiting, self._turned_away, self._flood_noted = 0, 0, 0.0
        self.log = EventLog(log_path)
        self._acked: dict[str, int] = {}
        self._runner_seq = 0
        self._listeners: list[Listener] = []
        self._server = None
        self.connected_streams: set[str] = set()
        self.probe_connected = asyncio.Event()
        self.port = 0
        self.host = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def credential(self, source: Source) -> str:
        """A new secret for one client of `source` (a probe, the Frida bridge)."""
        if source not in CLIENT_SOURCES:
            raise ValueError(f"'{source}' does not connect over the websocket")
        token = secrets.token_urlsafe(24)
        self._credentials[_key(token)] = Credential(str(source))
        return token

    def subscribe(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def recorded_event(self, name: str, source: Source | None = None,
                       where: Callable[[Event], bool] | None = None, since: int = 0) -> Event | None:
        """The first recorded event with this name (and source, and matching `where`), from the `since`-th
        recorded one on, or None."""
        return next((e for e in self.log.events[since:] if _matches(e, name, source, where)), None)

    async def wait_event(self, name: str, source: Source | None = None,
                         where: Callable[[Event], bool] | None = None, since: int = 0) -> Event:
        """recorded_event, waiting for it if need be."""
        if (e := self.recorded_event(name, source, where, since)) is not None:
            return e
        found: asyncio.Future = asyncio.get_running_loop().create_future()
        def listener(e: Event) -> None:
            if _matches(e, name, source, where) and not found.done():
                found.set_result(e)
        self.subscribe(listener)
        try:
            return await found
        finally:
            self._listeners.remove(listener)

    async def start(self, host: str = "127.0.0.1") -> None:
        """Listen on host: loopback, or the host's address on a container network (probes inside reach it there)."""
        self.host = host
        self._server = await serve(self._handle, host, 0, max_size=MAX_FRAME)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self, limit: float = 15.0) -> None:
        """Close every connection (a probe that never answers the close is cut off after `limit`), then the log."""
        try:
            if self._server:
                self._server.close()
                await asyncio.wait_for(self._server.wait_closed(), limit)
        except asyncio.TimeoutError:
            self.record_internal(Source.RUNNER, ev.SOURCE_ERROR, {"teardown": "evaluator",
                                                                  "error": f"connections still open after {limit:.0f}s"})
        finally:
            self.log.close()

    # -- recording -----------------------------------------------------------------
    def record(self, event: Event) -> bool:
        """Record an authenticated event once; False when it is a resend already recorded."""
        stream = event.stream or f"{event.source}"
        if event.seq <= self._acked.get(stream, -1):
            return False
        self._acked[stream] = event.seq
        event.received = time.time()
        self.log.append(event)
        for fn in self._listeners:
            fn(event)
        return True

    async def quiet(self, gap: float, limit: float, since: float | None = None) -> None:
        """Wait until no event has arrived for `gap` seconds, counted from `since` at the earliest (the
        wall-clock time the agent stopped), and at most `limit`: lets the milestones of the agent's last
        actions, still in flight from the app, land before the state is read. Counting from the agent's
        end matters: a last event older than `gap` says nothing about the ones its last call set off."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while loop.time() < deadline:
            last = max((self.log.events[-1].received or 0.0) if self.log.events else 0.0, since or 0.0)
            idle = time.time() - last if last else gap
            if idle >= gap:
                return
            await asyncio.sleep(min(gap - idle, deadline - loop.time()) + 0.01)

    def record_internal(self, source: Source, name: str, payload: dict | None = None, stream: str | None = None) -> Event:
        """Events the runner itself produces (query, fs, runner), through the same log and listeners."""
        stream = stream or source
        seq = self._acked.get(stream, -1) + 1
        event = Event(run_id=self.run_id, source=source, app=self.app, name=name,
                      payload=payload or {}, seq=seq, stream=stream)
        self.record(event)
        return event

    def _forgery(self, reason: str, conn: ServerConnection, detail: dict | None = None) -> None:
        peer = conn.remote_address
        self.record_internal(Source.RUNNER, ev.FORGERY, {"reason": reason, "peer": list(peer) if peer else None, **(detail or {})})

    # -- connection handling -----------------------------------------------------------
    async def _handle(self, conn: ServerConnection) -> None:
        if self._waiting >= MAX_UNAUTHENTICATED:  # a flood: turned away, counted, recorded at most once a second
            self._turned_away += 1
            if time.monotonic() - self._flood_noted >= 1.0:
                self._flood_noted = time.monotonic()
                self._forgery("too many connections waiting to authenticate", conn, {"turned_away": self._turned_away})
                self._turned_away = 0
            await conn.close(1013, "busy")
            return
        stream, cred = None, None
        try:
            self._waiting += 1
            try:
                first = json.loads(await asyncio.wait_for(conn.recv(), timeout=HELLO_TIMEOUT))
            finally:
                self._waiting -= 1
            if not isinstance(first, dict) or first.get("type") != "hello":
                self._forgery("message before authentication", conn, {"message": _clip(first)})
                await conn.close(4001, "authenticate first")
                return
            said = {"stream": _clip(first.get("stream")), "source": _clip(first.get("source"))}
            cred = self._credentials.get(_key(str(first.get("token", ""))))
            refused = self._refusal(cred, first)
            if refused:
                self._forgery(refused, conn, said)
                cred = None
                await conn.close(4003, "refused")
                return
            stream = cred.stream = str(first["stream"])
            cred.conn = conn
            self._pinned[stream] = cred
            await conn.send(json.dumps({"type": "welcome", "acked": self._acked.get(stream, -1)}))
            self.connected_streams.add(stream)
            self.record_internal(Source.RUNNER, ev.PROBE_CONNECTED, {"stream": stream, "source": cred.source})
            self.probe_connected.set()
            async for message in conn:
                try:
                    msg = json.loads(message)
                    event = Event.model_validate({**msg["event"], "stream": stream}) if msg.get("type") == "event" else None
                except (ValueError, ValidationError, KeyError, TypeError, AttributeError) as e:
                    self.record_internal(Source.RUNNER, ev.SOURCE_ERROR, {"stream": stream, "error": f"malformed event: {e}"[:500]})
                    continue
                if event is None:
                    continue
                if event.run_id != self.run_id or event.source != cred.source:
                    self._forgery("event claims another run or a source its credential is not for", conn,
                                  {"stream": stream, "event": _clip(msg)})
                    continue
                self.record(event)
                await conn.send(json.dumps({"type": "ack", "seq": event.seq}))
        except json.JSONDecodeError:  # only the hello gets here
            self._forgery("malformed message before authentication", conn)
        except asyncio.TimeoutError:
            self._forgery("no hello within the time allowed", conn)
        except ConnectionClosed as e:
            if e.rcvd is not None and e.rcvd.code == 1009 or e.sent is not None and e.sent.code == 1009:
                if stream:
                    self.record_internal(Source.RUNNER, ev.SOURCE_ERROR, {"stream": stream, "error": "a frame over the size limit"})
                else:
                    self._forgery("a frame over the size limit before authentication", conn)
        finally:
            if cred is not None and cred.conn is conn:
                cred.conn = None
            if stream is not None:
                self.connected_streams.discard(stream)
                self.record_internal(Source.RUNNER, ev.PROBE_DISCONNECTED, {"stream": stream})

    def _refusal(self, cred: Credential | None, hello: dict) -> str | None:
        """Why a hello is refused, or None."""
        if cred is None:
            return "wrong token"
        if hello.get("source") != cred.source:
            return f"a {cred.source} credential speaking as another source"
        stream = hello.get("stream")
        if not isinstance(stream, str) or not stream:
            return "no stream named"
        if cred.stream is not None and stream != cred.stream:
            return "a credential already pinned to another stream"
        if cred.stream is None and stream in self._pinned:
            return "a stream another credential holds"
        if cred.conn is not None:
            return "a second connection with a credential already connected"
        return None


def _matches(e: Event, name: str, source: Source | None, where: Callable[[Event], bool] | None) -> bool:
    return e.name == name and (source is None or e.source == source) and (where is None or where(e))


def _clip(obj: object) -> str:
    return json.dumps(obj, default=str)[:300]
