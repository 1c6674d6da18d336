"""The JavaScript probe client (probe_runtime/client.js) against the real evaluator, run by a real Node: the
same protocol as the Python client (hello with the secret, numbered events, acknowledgements, resend of
what was not acknowledged after a dropped connection), the one-time config deleted as it is read, and a
client whose event loop is blocked while it connects (an app loading its modules) still connects."""

import asyncio
import json
import os
import subprocess

import pytest

from evaluator import events as ev
from mcpworld.config.load import load_apps
from mcpworld.install import npm_prefix
from mcpworld.paths import RUNTIME_DIR

DRIVER = """
const { readConfig, ProbeClient } = require(%s);
const readline = require("readline");
const cfg = readConfig();
const client = new ProbeClient(cfg, "probe", "js-stream");
const block = Number(process.env.BLOCK_MS || 0);
if (block) { const end = Date.now() + block; while (Date.now() < end) {} }  // the app loading its modules
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", async (line) => {
  const [cmd, arg] = line.split(" ");
  if (cmd === "emit") for (let i = 0; i < Number(arg); i++) client.emit("thing_happened", { i });
  if (cmd === "flush") console.log(JSON.stringify({ flushed: await client.flush(15000), errors: client.errors.length }));
  if (cmd === "exit") { client.close(); process.exit(0); }
});
console.log(JSON.stringify({ config_left: require("fs").existsSync(process.env.MCPWORLD_PROBE_CONFIG) }));
"""


def node_with_websocket() -> str | None:
    """A Node of 22 or later (built-in WebSocket): an app's pinned Node, else the machine's."""
    candidates = [str(npm_prefix(a) / "bin" / "node") for a in load_apps().values()] + ["node"]
    for node in candidates:
        try:
            r = subprocess.run([node, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return node
    return None


NODE = node_with_websocket()
pytestmark = pytest.mark.skipif(NODE is None, reason="no Node with a built-in WebSocket (mcpworld apps install pins one)")


class Driver:
    def __init__(self, evaluator, tmp_path, block_ms=0):
        cfg = tmp_path / "probe-run.json"
        cfg.write_text(json.dumps({"url": evaluator.url, "token": evaluator.credential("probe"), "run_id": "run1", "app": "testapp"}))
        script = tmp_path / "driver.js"
        script.write_text(DRIVER % json.dumps(str(RUNTIME_DIR / "client.js")))
        env = {**os.environ, "MCPWORLD_PROBE_CONFIG": str(cfg), "BLOCK_MS": str(block_ms)}
        self.proc = subprocess.Popen([NODE, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.cfg = cfg

    async def send(self, line: str) -> dict | None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        if line.startswith("flush"):
            return json.loads(await asyncio.to_thread(self.proc.stdout.readline))
        return None

    async def first(self) -> dict:
        return json.loads(await asyncio.to_thread(self.proc.stdout.readline))

    def close(self):
        try:
            self.proc.stdin.write("exit\n")
            self.proc.stdin.flush()
            self.proc.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def probe_events(evaluator):
    return [x for x in evaluator.log.events if x.source == "probe"]


async def test_events_arrive_in_order_acknowledged_and_the_config_is_deleted(evaluator, tmp_path):
    d = Driver(evaluator, tmp_path)
    try:
        assert (await d.first()) == {"config_left": False}
        await d.send("emit 50")
        assert (await d.send("flush"))["flushed"]
        got = probe_events(evaluator)
        assert [x.payload["i"] for x in got] == list(range(50)) and [x.seq for x in got] == list(range(50))
        assert {x.stream for x in got} == {"js-stream"}
    finally:
        d.close()


async def test_a_dropped_connection_resends_what_was_not_acknowledged_once(evaluator, tmp_path):
    d = Driver(evaluator, tmp_path)
    try:
        await d.first()
        await d.send("emit 1")
        assert (await d.send("flush"))["flushed"]
        for conn in list(evaluator._server.connections):
            await conn.close()
        await d.send("emit 5")
        assert (await d.send("flush"))["flushed"]
        got = probe_events(evaluator)
        assert [x.seq for x in got] == list(range(6))
        assert len([x for x in evaluator.log.events if x.name == ev.PROBE_CONNECTED]) >= 2
    finally:
        d.close()


async def test_a_client_blocked_while_it_connects_still_connects(evaluator, tmp_path):
    """Its wait for the welcome starts when the handshake ends: 6.5 s of a blocked event loop (longer than that
    wait) while the socket is being made loses nothing."""
    d = Driver(evaluator, tmp_path, block_ms=6500)
    try:
        await d.first()
        await d.send("emit 3")
        assert (await d.send("flush"))["flushed"]
        assert [x.seq for x in probe_events(evaluator)] == [0, 1, 2]
    finally:
        d.close()


async def test_a_wrong_secret_is_refused_and_recorded(evaluator, tmp_path):
    d = Driver(evaluator, tmp_path)
    d.close()
    cfg = tmp_path / "probe-run.json"
    cfg.write_text(json.dumps({"url": evaluator.url, "token": "guessed", "run_id": "run1", "app": "testapp"}))
    script = tmp_path / "driver.js"
    env = {**os.environ, "MCPWORLD_PROBE_CONFIG": str(cfg)}
    proc = subprocess.Popen([NODE, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        await asyncio.to_thread(proc.stdout.readline)
        proc.stdin.write("emit 1\n")
        proc.stdin.flush()
        for _ in range(100):
            if any(x.name == ev.FORGERY for x in evaluator.log.events):
                break
            await asyncio.sleep(0.05)
        assert any(x.name == ev.FORGERY for x in evaluator.log.events)
        assert not probe_events(evaluator)
    finally:
        proc.kill()
