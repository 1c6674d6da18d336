"""The probe relay (probe_runtime/relay.py) against the real evaluator, with real Node probes (client.js) of
another user as its peers: the secret stays in the relay, peers are admitted by what the kernel says of them
(the app's user, non-dumpable, a sibling of the first peer) and their events arrive in order on the relay's
stream; a process that is not a sibling, or one whose memory is open, is refused and recorded."""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from evaluator import events as ev
from mcpworld import paths
from mcpworld.config.load import load_apps
from mcpworld.install import not_dumpable_addon, npm_prefix

APP_UID = 65534  # nobody: the app's user here

DRIVER = """
const { openProbe } = require(%s);
const readline = require("readline");
(async () => {
  const probe = await openProbe();
  console.log(JSON.stringify(probe ? { config: Object.keys(probe.cfg).sort(), token: JSON.stringify(probe.cfg).includes(%s) }
                                   : { refused: true }));
  if (!probe) process.exit(0);
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    const [cmd, arg] = line.split(" ");
    if (cmd === "emit") for (let i = 0; i < Number(arg); i++) probe.client.emit("thing_happened", { i, pid: process.pid });
    if (cmd === "flush") console.log(JSON.stringify({ flushed: await probe.client.flush(15000) }));
    if (cmd === "exit") { probe.client.close(); process.exit(0); }
  });
})();
"""


def _node_with_addon() -> tuple[str, str] | None:
    for app in load_apps().values():
        node, addon = npm_prefix(app) / "bin" / "node", not_dumpable_addon(app)
        if node.exists() and addon.exists():
            return str(node), str(addon)
    return None


FOUND = _node_with_addon()
pytestmark = [
    pytest.mark.skipif(FOUND is None, reason="no app Node with the runtime's addon (mcpworld apps install builds it)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the relay runs as root and its peers as another user"),
]


@pytest.fixture
async def relay(evaluator):
    tmp_path = Path(tempfile.mkdtemp(prefix="mcpworld-relay-test-"))  # the peers' user reaches it (pytest's is root's)
    folder = tmp_path / "app"
    folder.mkdir(mode=0o700)
    os.chown(folder, APP_UID, APP_UID)
    os.chmod(tmp_path, 0o755)
    token = evaluator.credential("probe")
    cfg = tmp_path / "relay.json"
    cfg.write_text(json.dumps({"url": evaluator.url, "token": token, "run_id": "run1", "app": "testapp",
                               "ports": {"bridge": 1}, "secrets": {"bridge": "b" * 16}, "bind_host": "127.0.0.1"}))
    script = tmp_path / "driver.js"
    script.write_text(DRIVER % (json.dumps(str(paths.RUNTIME_DIR / "client.js")), json.dumps(token)))
    os.chmod(script, 0o644)
    sock = folder / "relay.sock"
    sealed = tmp_path / "probe"  # the probe's files as the trial placed them
    sealed.mkdir()
    (sealed / "extension.js").write_text("// the probe\n")
    proc = subprocess.Popen([sys.executable, "-m", "probe_runtime.relay", "--socket", str(sock), "--seal", str(sealed)],
                            stdin=subprocess.PIPE,
                            env={**os.environ, "MCPWORLD_PROBE_CONFIG": str(cfg), "PYTHONPATH": str(paths.CODE_ROOT)},
                            cwd=paths.CODE_ROOT)
    for _ in range(200):
        if sock.exists():
            break
        await asyncio.sleep(0.05)
    yield {"sock": sock, "script": script, "config_left": cfg.exists(), "sealed": sealed}
    proc.stdin.write(b"stop\n")
    proc.stdin.flush()
    proc.wait(20)
    shutil.rmtree(tmp_path)


class Peer:
    """A Node probe as the app's user; `via_shell`: started by a shell (not a sibling of the others)."""

    def __init__(self, relay, dumpable=False, via_shell=False):
        node, addon = FOUND
        env = {"PATH": os.environ["PATH"], "MCPWORLD_PROBE_RELAY": str(relay["sock"])}
        if not dumpable:
            env["MCPWORLD_NOT_DUMPABLE"] = addon
        argv = [node, str(relay["script"])]
        if via_shell:
            argv = ["sh", "-c", f'"{node}" "{relay["script"]}"; true']
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     user=APP_UID, group=APP_UID, cwd="/")

    async def line(self) -> dict:
        return json.loads(await asyncio.to_thread(self.proc.stdout.readline))

    async def send(self, line: str) -> dict | None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return await self.line() if line == "flush" else None

    def close(self):
        try:
            self.proc.stdin.write("exit\n")
            self.proc.stdin.flush()
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def test_siblings_are_admitted_without_the_secret_and_others_refused(evaluator, relay):
    assert not relay["config_left"]  # the relay read and deleted its run config
    first, second = Peer(relay), Peer(relay)
    peers = [first, second]
    try:
        for p in peers:
            assert await p.line() == {"config": ["app", "bind_host", "ports", "run_id", "secrets"], "token": False}
        await first.send("emit 3")
        await second.send("emit 2")
        for p in peers:
            assert (await p.send("flush"))["flushed"]
        shell, dumpable = Peer(relay, via_shell=True), Peer(relay, dumpable=True)
        peers += [shell, dumpable]
        assert await shell.line() == {"refused": True}
        assert await dumpable.line() == {"refused": True}
        await first.send("emit 1")
        assert (await first.send("flush"))["flushed"]
    finally:
        for p in peers:
            p.close()
    # a peer's flush says the relay holds its events; the relay's own client delivers them
    for _ in range(200):
        probe = [e for e in evaluator.log.events if e.source == "probe"]
        if len(probe) >= 8:
            break
        await asyncio.sleep(0.05)
    assert {e.stream for e in probe} == {"testapp-probe-relay"}
    assert [e.seq for e in probe] == list(range(len(probe)))
    got = [(e.payload["pid"], e.payload["i"]) for e in probe if e.name == "thing_happened"]
    assert [i for pid, i in got if pid == first.proc.pid] == [0, 1, 2, 0]
    assert [i for pid, i in got if pid == second.proc.pid] == [0, 1]
    refusals = [e.payload["reason"] for e in probe if e.name == ev.FORGERY]
    assert len(refusals) == 2
    assert any("not a sibling" in r for r in refusals) and any("dumpable" in r for r in refusals)


async def test_no_peer_is_admitted_once_the_probes_files_changed(evaluator, relay):
    """A program of the app's user that rewrote the probe and reloaded the app would start a sibling running its
    code: the relay compares the probe's files with what the trial placed before it admits anyone."""
    first = Peer(relay)
    try:
        assert "config" in await first.line()
        (relay["sealed"] / "extension.js").write_text("// emits whatever it likes\n")
        second = Peer(relay)
        try:
            assert await second.line() == {"refused": True}
        finally:
            second.close()
    finally:
        first.close()
    for _ in range(200):
        refusals = [e.payload["reason"] for e in evaluator.log.events if e.name == ev.FORGERY]
        if refusals:
            break
        await asyncio.sleep(0.05)
    assert len(refusals) == 1 and "the probe's files changed" in refusals[0], refusals

