"""The Frida bridge: attach to an app process, load the hook scripts, forward their `send()`s as
milestone events (source "frida") over the same websocket protocol as the Python probes.

Run next to the app (inside its container for the docker backend: attaching from the host into a
container process fails):

    python -m probe_runtime.frida_bridge --pid PID --script hooks/obs/scenes.js   (probe_runtime/frida/prelude.js goes first)
    [--attach-on-stdin: start now, attach when a line arrives on stdin]

The run config (evaluator URL, secret) comes from the file in $MCPWORLD_PROBE_CONFIG, deleted once
read. A script error, a detached session or a crashed app becomes an event with the reason.
A hook script sends `{mcpworld: 1, event: NAME, payload: {...}}` (the prelude's mcpworld.emit);
any other message is forwarded as `frida_message`.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
import time
from pathlib import Path

import frida

from probe_runtime.client import ProbeClient, read_config

PRELUDE = Path(__file__).with_name("frida") / "prelude.js"


class FridaBridge:
    def __init__(self, client: ProbeClient, scripts: list[Path]):
        self.client, self.scripts = client, scripts
        self.session = None
        self.detached = threading.Event()
        self._offset = 0

    def attach(self, pid: int, attempts: int = 3) -> None:
        for attempt in range(attempts):
            try:
                self.session = frida.attach(pid)
                break
            except (frida.TimedOutError, frida.ProcessNotRespondingError):
                # on a loaded machine the app may not stop for the injection in time (seen once in CI:
                # "timed out while waiting for stop"); the attempt leaves nothing behind, so try again
                if attempt == attempts - 1:
                    raise
                time.sleep(0.2)
        self.session.on("detached", self._on_detached)
        prelude = PRELUDE.read_text()
        self._offset = prelude.count("\n") + 1  # line numbers in errors count from the script's own start
        loaded = []
        for path in self.scripts:
            # each script is its own JS runtime: the prelude goes in front of every one
            try:
                script = self.session.create_script(prelude + "\n" + path.read_text(), name=path.stem)
                script.on("message", lambda message, data, name=path.name: self._on_message(name, message))
                script.load()
            except frida.InvalidArgumentError as e:  # a syntax error: say so, keep the other scripts
                self.client.emit("hook_error", {"script": path.name, "description": self._own_lines(str(e))})
                continue
            loaded.append((path.name, script))
        # an RPC round trip per script: every send() made while loading arrives before frida_attached
        for _name, script in loaded:
            script.list_exports_sync()
        self.client.emit("frida_attached", {"pid": pid, "scripts": [p.name for p in self.scripts]})

    def _on_message(self, script: str, message: dict) -> None:
        if message.get("type") == "send":
            body = message.get("payload")
            if isinstance(body, dict) and body.get("mcpworld") == 1 and isinstance(body.get("event"), str):
                payload = body.get("payload") if isinstance(body.get("payload"), dict) else {"value": body.get("payload")}
                fired = body.get("t")
                self.client.emit(body["event"], {**payload, "script": script},
                                 ts=fired / 1000 if isinstance(fired, (int, float)) else None)
            else:
                self.client.emit("frida_message", {"script": script, "payload": body})
        elif message.get("type") == "error":
            line = message.get("lineNumber")
            self.client.emit("hook_error", {"script": script, "description": message.get("description"),
                                            "stack": message.get("stack"),
                                            "line": line - self._offset if isinstance(line, int) else line})

    def _own_lines(self, text: str) -> str:
        return re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) - self._offset}", text)

    def _on_detached(self, reason, crash) -> None:
        detail = {"reason": str(reason)}
        if crash is not None:
            detail["crash"] = {"summary": crash.summary, "report": crash.report[-3000:]}
        self.client.emit("frida_detached", detail)
        self.detached.set()

    def close(self) -> None:
        if self.session is not None and not self.detached.is_set():
            try:
                self.session.detach()
            except frida.InvalidOperationError:
                pass
        self.client.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--script", action="append", type=Path, required=True)
    ap.add_argument("--attach-on-stdin", action="store_true",
                    help="start up and connect now, attach once a line arrives on stdin (EOF: exit)")
    args = ap.parse_args(argv)
    cfg = read_config()
    if cfg is None:
        print("no run config ($MCPWORLD_PROBE_CONFIG)", file=sys.stderr)
        return 2
    client = ProbeClient.from_config(cfg, source="frida")
    bridge = FridaBridge(client, args.script)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    # Started with the app, the bridge has paid for its own start (Python, Frida, the evaluator's socket)
    # by the time the app has loaded what the hooks need.
    if args.attach_on_stdin and not sys.stdin.readline():
        client.close()
        return 0
    try:
        bridge.attach(args.pid)
    except (frida.ProcessNotFoundError, frida.PermissionDeniedError, frida.ProcessNotRespondingError,
            frida.InvalidArgumentError, frida.TransportError, frida.TimedOutError) as e:
        client.emit("hook_error", {"script": None, "description": f"attach failed: {type(e).__name__}: {e}"})
        client.close()
        return 1
    while not stop.is_set() and not bridge.detached.is_set():
        stop.wait(0.2)
    bridge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
