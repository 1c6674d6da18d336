"""Trace calls of exported functions in a running process with Frida: the hook-writing workflow.

    tracer = Tracer(pid, "obs_source_*", module="libobs*")
    tracer.start(print)   # each call: {"function", "module", "args", "backtrace", "thread", "ts"}
"""

from __future__ import annotations

import fnmatch
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import frida

FRIDA_DIR = Path(__file__).with_name("frida")


class Tracer:
    def __init__(self, pid: int, pattern: str, module: str = "*", max_args: int = 4, signatures: Path | None = None):
        self.pid, self.pattern, self.module, self.max_args = pid, pattern, module, max_args
        self.signatures = json.loads(signatures.read_text()) if signatures else None
        self.session = None
        self.hooked: int | None = None
        self.errors: list[str] = []

    def start(self, on_call: Callable[[dict], None], ready_timeout: float = 60.0) -> int:
        """Attach and hook; returns how many functions were hooked."""
        source = "\n".join([
            f"const PATTERN = {json.dumps(self.pattern)};", f"const MODULE = {json.dumps(self.module)};",
            f"const MAX_ARGS = {int(self.max_args)};", f"const SIGNATURES = {json.dumps(self._matching_signatures())};",
            (FRIDA_DIR / "prelude.js").read_text(), (FRIDA_DIR / "trace.js").read_text()])
        self.session = frida.attach(self.pid)
        script = self.session.create_script(source, name="trace")

        def on_message(message, data):
            if message.get("type") == "error":
                self.errors.append(message.get("description", ""))
                return
            body = message.get("payload") or {}
            if body.get("event") == "trace_ready":
                self.hooked = body["payload"]["hooked"]
            elif body.get("event") == "call":
                on_call({**body["payload"], "ts": time.time()})
            elif body.get("event") == "hook_missing":
                self.errors.append(f"cannot hook {body['payload']['function']}: {body['payload'].get('error')}")

        script.on("message", on_message)
        script.load()
        deadline = time.monotonic() + ready_timeout
        while self.hooked is None and time.monotonic() < deadline and not self.errors:
            time.sleep(0.02)
        if self.hooked is None:
            raise RuntimeError(f"the trace script did not start: {'; '.join(self.errors) or 'timeout'}")
        return self.hooked

    def _matching_signatures(self) -> dict | None:
        """Only the signatures of functions the pattern can match: keeps the script small."""
        if not self.signatures:
            return None
        rx = re.compile("|".join(fnmatch.translate(g.strip()) for g in self.pattern.split(",")))
        return {"decoders": self.signatures.get("decoders", {}),
                "functions": {k: v for k, v in self.signatures.get("functions", {}).items() if rx.match(k)}}

    def stop(self) -> None:
        if self.session is not None:
            try:
                self.session.detach()
            except frida.InvalidOperationError:
                pass
            self.session = None


def format_call(call: dict) -> str:
    where = f"  <- {call['backtrace'][0]}" if call.get("backtrace") else ""
    return f"{call['function']}({', '.join(call['args'])}){where}"


def main(argv: list[str] | None = None) -> int:
    """Trace a process, one JSON object per call on stdout, until SIGINT/SIGTERM.

    A separate process on purpose: a Python parent whose asyncio loop reaps its children would
    swallow the stop Frida waits for when attaching to that child.
    """
    import argparse
    import signal
    import sys
    import threading

    ap = argparse.ArgumentParser(description="trace calls of exported functions")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--pattern", required=True)
    ap.add_argument("--module", default="*")
    ap.add_argument("--signatures", type=Path, help="parameter types, e.g. hooks/obs/signatures.json")
    args = ap.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    tracer = Tracer(args.pid, args.pattern, args.module, signatures=args.signatures)
    lock = threading.Lock()

    def emit(obj: dict) -> None:
        with lock:
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

    try:
        hooked = tracer.start(lambda call: emit({"type": "call", **call}))
    except (RuntimeError, frida.ProcessNotFoundError, frida.TimedOutError, frida.PermissionDeniedError) as e:
        emit({"type": "error", "error": str(e)})
        return 1
    emit({"type": "ready", "hooked": hooked, "errors": tracer.errors})
    while not stop.is_set():
        stop.wait(0.2)
    tracer.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
