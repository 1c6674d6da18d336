"""A model API on a loopback port that answers with scripted replies: what the model agents' tests point the
real SDK clients at (no model API can be reached from here, and a test must not depend on one)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    """Keeps every request it gets ({"method", "path", "headers", "body"}) and answers each with
    answer(request) -> (status, JSON payload, extra headers). Subclasses say what to answer."""

    def __init__(self):
        self.requests: list[dict] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                request = {"method": method, "path": self.path, "headers": dict(self.headers), "body": body}
                api.requests.append(request)
                status, payload, headers = api.answer(request)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, request: dict) -> tuple[int, dict, dict]:
        raise NotImplementedError

    def close(self):
        self.server.shutdown()
        self.server.server_close()
