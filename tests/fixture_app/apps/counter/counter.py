"""Counter: a tiny real X program of our own, the fixture app of the tests (python-xlib, no toolkit).

A window titled "Counter - <list name>" shows a list of items. Typing a name and pressing Return adds it
(Escape clears what was typed; Ctrl+Q quits, exit status 0); the list is saved to DATA/list.json after every
change. A control port
(one JSON request per line: {"op": "add", "name": ...}, {"op": "state"}) lets its MCP server act on the
running app, as an app's scripting API would. Plug-ins (Python files in --plugins) are imported at start
and told about the app's events: that is where mcpworld's probe goes.

    python counter.py --data DIR --port PORT [--plugins DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import select
import socket
import sys
from pathlib import Path

from Xlib import X, XK, Xutil, display


class Counter:
    def __init__(self, data: Path, port: int):
        self.data = data
        saved = json.loads((data / "list.json").read_text())
        self.title, self.items = saved["title"], list(saved["items"])
        self.typed = ""
        self.listeners: dict[str, list] = {"ready": [], "item_added": []}
        self.d = display.Display()
        screen = self.d.screen()
        self.win = screen.root.create_window(
            0, 0, 480, 320, 0, screen.root_depth, X.InputOutput, X.CopyFromParent,
            background_pixel=screen.white_pixel, event_mask=X.ExposureMask | X.KeyPressMask | X.StructureNotifyMask)
        self.win.set_wm_name(f"Counter - {self.title}")
        self.win.set_wm_class("counter", "Counter")
        self.win.set_wm_hints(flags=Xutil.InputHint, input=1)
        self.gc = self.win.create_gc(foreground=screen.black_pixel, background=screen.white_pixel)
        self.server = socket.create_server(("127.0.0.1", port))
        self.clients: list[socket.socket] = []

    def on(self, event: str, fn) -> None:
        self.listeners[event].append(fn)

    def _fire(self, event: str, **payload) -> None:
        for fn in self.listeners[event]:
            fn(**payload)

    def add(self, name: str) -> None:
        self.items.append(name)
        (self.data / "list.json").write_text(json.dumps({"title": self.title, "items": self.items}, indent=1))
        self._fire("item_added", name=name, count=len(self.items))
        self.draw()

    def draw(self) -> None:
        self.win.clear_area()
        self.win.draw_text(self.gc, 12, 20, f"{self.title}: {len(self.items)} item(s)")
        for i, item in enumerate(self.items[-12:]):
            self.win.draw_text(self.gc, 24, 44 + 18 * i, f"- {item}")
        self.win.draw_text(self.gc, 12, 300, f"new item: {self.typed}_")
        self.d.flush()

    def key(self, event) -> None:
        shifted = 1 if event.state & X.ShiftMask else 0
        keysym = self.d.keycode_to_keysym(event.detail, shifted)
        if event.state & X.ControlMask and keysym == XK.XK_q:
            self.d.close()
            sys.exit(0)
        if keysym == XK.XK_Return:
            if self.typed:
                name, self.typed = self.typed, ""
                self.add(name)
        elif keysym == XK.XK_BackSpace:
            self.typed = self.typed[:-1]
        elif keysym == XK.XK_Escape:
            self.typed = ""
        else:
            text = XK.keysym_to_string(keysym)
            if text and text.isprintable():
                self.typed += text
        self.draw()

    def request(self, line: bytes) -> dict:
        try:
            req = json.loads(line)
            if req.get("op") == "add":
                if not str(req.get("name", "")).strip():
                    return {"error": "an item needs a name"}
                self.add(str(req["name"]))
                return {"result": {"added": req["name"], "count": len(self.items)}}
            if req.get("op") == "state":
                return {"result": {"title": self.title, "items": self.items}}
            return {"error": f"unknown op {req.get('op')!r}"}
        except (ValueError, AttributeError) as e:
            return {"error": f"bad request: {e}"}

    def run(self) -> None:
        self.win.map()
        self.d.flush()
        mapped = False
        while True:
            while self.d.pending_events():
                event = self.d.next_event()
                if event.type == X.Expose and event.count == 0:
                    self.draw()
                elif event.type == X.MapNotify and not mapped:
                    mapped = True
                    self.draw()
                    self._fire("ready")
                elif event.type == X.KeyPress:
                    self.key(event)
            readable, _, _ = select.select([self.d.fileno(), self.server, *self.clients], [], [], 0.5)
            for r in readable:
                if r is self.server:
                    self.clients.append(self.server.accept()[0])
                elif r is not self.d.fileno() and r in self.clients:
                    line = r.recv(65536)
                    if not line:
                        self.clients.remove(r)
                        r.close()
                        continue
                    r.sendall(json.dumps(self.request(line)).encode() + b"\n")


def load_plugins(folder: Path, app: Counter) -> None:
    sys.path.insert(0, str(folder))
    for f in sorted(folder.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"counter_plugin_{f.stem}", f)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "start"):
            module.start(app)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--plugins", type=Path)
    args = ap.parse_args()
    app = Counter(args.data, args.port)
    if args.plugins and args.plugins.is_dir():
        load_plugins(args.plugins, app)
    app.run()


if __name__ == "__main__":
    main()
