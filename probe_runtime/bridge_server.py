"""The loopback HTTP bridge an in-app probe serves to its app's MCP server and state query.

POST / {"method": name, "params": {...}} with `Authorization: Bearer <the run's secret>` ->
{"result": ...} or {"error": "..."}. A request without the secret is refused (401) and reported through
`on_refused`, so a forged call shows in the run's events. Requests arrive on a server thread; each method
runs on the app's main thread through `run_on_main(fn)` (the app's own way to post work to its GUI thread),
between `before_call(method)` (so what changed by hand until now is not taken for the call's doing) and
`after_call(method)` (the probe re-reads the app and emits what the call changed). `in_call()` is true
meanwhile, which labels those events as the API's. The reply waits for `flush()`: the call's events are
with the evaluator before the MCP tool returns.

Methods are plain functions `fn(params) -> result` that raise `BridgeError` for a caller's mistake.
There is deliberately no "run this code" method: code run inside the app could reach the probe.
Standard library only: it runs in the app's own Python.
"""

from __future__ import annotations

import hmac
import json
import threading
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class BridgeError(Exception):
    """A caller's mistake (unknown object, bad value): its message goes back as the tool's error."""


class BridgeServer:
    def __init__(self, methods: dict[str, Callable[[dict], object]], secret: str,
                 run_on_main: Callable[[Callable[[], None]], None], *,
                 on_refused: Callable[[str], None] = lambda peer: None,
                 before_call: Callable[[str], None] = lambda method: None,
                 after_call: Callable[[str], None] = lambda method: None,
                 flush: Callable[[], object] = lambda: None, timeout: float = 60.0):
        self.methods, self._secret, self._run_on_main = methods, secret, run_on_main
        self._on_refused, self._before, self._after, self._flush = on_refused, before_call, after_call, flush
        self.timeout = timeout
        self._in_call = False  # read and written on the main thread only
        self._server: ThreadingHTTPServer | None = None

    def in_call(self) -> bool:
        return self._in_call

    def call(self, method: str, params: dict) -> dict:
        """Run one method on the main thread and wait for it: {"result": ...} or {"error": ...}."""
        fn = self.methods.get(method)
        if fn is None:
            return {"error": f"unknown method '{method}' (methods: {', '.join(sorted(self.methods))})"}
        box: dict = {}
        done = threading.Event()

        def run() -> None:
            try:
                self._before(method)
            except Exception:
                pass
            self._in_call = True
            try:
                box["result"] = fn(params)
            except BridgeError as e:
                box["error"] = str(e)
            except Exception as e:
                box["error"] = f"{type(e).__name__}: {e}"
                box["trace"] = traceback.format_exc()[-2000:]
            finally:
                try:
                    self._after(method)
                except Exception:
                    pass
                self._in_call = False
                done.set()

        self._run_on_main(run)
        if not done.wait(self.timeout):
            return {"error": f"'{method}' did not finish in {self.timeout:.0f} s"}
        self._flush()
        return box

    def serve(self, host: str, port: int) -> BridgeServer:
        bridge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                if not hmac.compare_digest(self.headers.get("Authorization", "").encode(),
                                           f"Bearer {bridge._secret}".encode()):
                    bridge._on_refused(f"{self.client_address[0]}:{self.client_address[1]}")
                    return self._reply(401, {"error": "unauthorized"})
                try:
                    req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                    method, params = str(req["method"]), req.get("params") or {}
                    if not isinstance(params, dict):
                        raise ValueError("params must be an object")
                except (ValueError, KeyError, TypeError) as e:
                    return self._reply(400, {"error": f"bad request: {e}"})
                self._reply(200, bridge.call(method, params))

            def _reply(self, code: int, body: dict) -> None:
                data = json.dumps(body, default=str).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="mcpworld-bridge", daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
