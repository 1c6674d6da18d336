"""The docker backend's environment: isolation, the live view, an app build mounted from the host, images."""

import asyncio
import json
import os
import urllib.request

import pytest
import websockets

from gateway.tools.bash import BashTool
from mcpworld import images
from mcpworld.envs.docker import DockerEnvironment, gpu_options, wait_for_removals
from mcpworld.envs.x11 import X11Desktop
from mcpworld.config.load import load_apps

ANKI = load_apps()["anki"]


@pytest.fixture
async def denv():
    e = DockerEnvironment(ANKI)
    await e.open()
    yield e
    await e.close()


async def _bash(env, command: str) -> str:
    bash = BashTool(env, timeout=20)
    try:
        r = await bash.call("bash", {"command": command})
        return r.texts[0]
    finally:
        await bash.close()


async def test_agent_is_unprivileged_and_offline(denv):
    out = await _bash(denv, "id -u; id -un; test -w /etc/passwd && echo writable || echo read-only")
    assert out.split()[:3] == ["1000", "agent", "read-only"]
    # root's folder (the Frida bridge's config and the task's scripts) is closed to the agent
    out = await _bash(denv, "ls /opt/mcpworld/lib 2>&1; echo rc=$?")
    assert "Permission denied" in out and "rc=2" in out
    # no route out of the internal network, by address or by name
    out = await _bash(denv, "timeout 5 python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 3)\" "
                            "2>&1 | tail -1; timeout 4 getent hosts deb.debian.org || echo no-dns")
    assert ("unreachable" in out.lower() or "timed out" in out.lower()) and "no-dns" in out


async def test_probes_inside_reach_the_evaluator_on_the_host(denv, tmp_path):
    from evaluator.server import Evaluator

    ev = Evaluator("run", "anki", tmp_path / "events.jsonl")
    await ev.start(denv.evaluator_host)
    try:
        out = await _bash(denv, f"timeout 5 python3 -c \"import socket; socket.create_connection(('{denv.evaluator_host}', "
                                f"{ev.port}), 3); print('reached')\"")
        assert "reached" in out
    finally:
        await ev.stop()


async def test_live_view_serves_novnc_and_the_vnc_stream(denv):
    url = denv.view_url
    assert url.startswith(f"http://{denv.ip}:6080/vnc.html")
    html = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read().decode())
    assert "noVNC" in html
    async with websockets.connect(f"ws://{denv.ip}:6080/websockify", subprotocols=["binary"]) as ws:
        hello = await asyncio.wait_for(ws.recv(), 10)
    assert bytes(hello).startswith(b"RFB 003.")


async def test_x_display_is_reachable_from_the_host(denv):
    """A window the host maps on the container's display is seen there by name and can take the focus
    (screenshots and input on it: tests/envs/test_conformance.py)."""
    from Xlib import X, display as xdisplay

    assert isinstance(denv, X11Desktop)
    d = xdisplay.Display(denv.display)
    try:
        root = d.screen().root
        win = root.create_window(10, 10, 200, 100, 0, d.screen().root_depth, X.InputOutput, X.CopyFromParent)
        win.set_wm_name("reachable from the host")
        win.map()
        d.sync()
        found = await denv.wait_window("^reachable from the host$", 10)
        assert found == win.id
        # the container's window manager gives the new window the focus (no app is up to keep it)
        assert await denv.wait_focus("^reachable from the host$", 10) == "reachable from the host"
        assert denv.active_window_name() == "reachable from the host"
    finally:
        d.close()


async def test_the_display_admits_the_runs_cookie_alone(denv, tmp_path):
    """The container's X server runs without -ac: a client without the runner's cookie is refused, from the host
    over TCP and inside on the display's own socket, while the host's clients and the agent's tools (which hold
    it) are admitted. VNC answers on the container's loopback alone: the live view reaches it through noVNC."""
    import socket
    import subprocess
    import sys

    (tmp_path / "none").write_bytes(b"")
    code = f"from Xlib import display; display.Display('{denv.display}').close(); print('admitted')"
    held = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    unheld = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                            env={**os.environ, "XAUTHORITY": str(tmp_path / "none")})
    assert held.stdout.strip() == "admitted", held.stderr
    assert unheld.returncode != 0 and "Authorization required" in unheld.stderr, (unheld.stdout, unheld.stderr)
    out = await _bash(denv, "xdpyinfo | head -1; XAUTHORITY=/dev/null xdpyinfo 2>&1 | head -1; ls -l $XAUTHORITY")
    agent, bare, cookie = out.splitlines()[:3]
    assert agent.startswith("name of display:") and "Authorization required" in bare, out
    assert cookie.startswith("-rw-r----- 1 app share"), cookie
    with pytest.raises(OSError):
        socket.create_connection((denv.ip, 5900), 3).close()


async def test_snapshot_restore_and_files_land_in_home(denv, tmp_path):
    from mcpworld import paths

    target = f"{denv.home}/Media"
    await denv.restore(paths.SNAPSHOTS_DIR / "anki" / "pictures", target)
    listing = await denv.list_dir(target)
    assert f"{target}/dog.png" in listing
    # restored as the app's user (the reset's), and visible on the host side of the bind mount for file watches
    assert (await denv._run(["stat", "-c", "%U", f"{target}/dog.png"]))[1].decode().strip() == "app"
    assert os.path.exists(denv.host_path(f"{target}/dog.png"))
    # a second restore deletes what the agent added
    await denv.write_text(f"{target}/extra.txt", "x")
    await denv.restore(paths.SNAPSHOTS_DIR / "anki" / "pictures", target)
    assert await denv.path_kind(f"{target}/extra.txt") is None


async def test_private_files_are_readable_only_by_their_owner(denv):
    path = await denv.write_private("secret.json", json.dumps({"token": "t"}), privileged=True)
    out = await _bash(denv, f"cat {path} 2>&1; echo rc=$?")
    assert "Permission denied" in out
    path = await denv.write_private("mine.json", "{}")  # the app's (its probe's config): not the agent's either
    assert "Permission denied" in await _bash(denv, f"cat {path} 2>&1")
    assert (await denv._run(["stat", "-c", "%U %a", path]))[1].decode().split() == ["app", "600"]


async def test_app_build_from_the_host_is_mounted_and_first_on_path(tmp_path):
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    tool = build / "bin" / "anki"
    tool.write_text("#!/bin/sh\necho instrumented-build \"$@\"\n")
    tool.chmod(0o755)
    env = DockerEnvironment(ANKI, app_build=build)
    await env.open()
    try:
        out = await _bash(env, "command -v anki; anki --version; touch /opt/mcpworld/app-build/x 2>&1 | tail -1")
        assert "/opt/mcpworld/app-build/bin/anki" in out and "instrumented-build --version" in out
        assert "Read-only file system" in out
    finally:
        await env.close()


async def test_closing_removes_the_container():
    env = DockerEnvironment(ANKI)
    await env.open()
    name = env.container.name
    await env.close()
    wait_for_removals()  # removal runs in the background
    assert not env.client.containers.list(all=True, filters={"name": name})


def test_gpu_flags(tmp_path):
    """No GPU here: only the options each case would give Docker are checked."""
    dev = tmp_path / "dev"
    dev.mkdir()
    none = gpu_options("auto", dev=dev)
    assert none.environment == {"LIBGL_ALWAYS_SOFTWARE": "1"} and not none.device_requests and not none.devices
    (dev / "dri").mkdir()
    dri = gpu_options("auto", dev=dev)
    assert dri.devices == [f"{dev}/dri:/dev/dri:rwm"] and "LIBGL_ALWAYS_SOFTWARE" not in dri.environment
    (dev / "nvidiactl").touch()
    nv = gpu_options("auto", dev=dev, nvidia_runtime=True)
    assert nv.device_requests[0]["Capabilities"] == [["gpu"]] and nv.device_requests[0]["Count"] == -1
    assert gpu_options("none", dev=dev).environment == {"LIBGL_ALWAYS_SOFTWARE": "1"}
    with pytest.raises(Exception, match="nvidia"):
        gpu_options("nvidia", dev=tmp_path / "empty")


def test_apt_mirror_is_read_from_the_apt_configuration(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb deb-src\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n")
    assert images.apt_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text("# comment\ndeb [arch=amd64] http://other.example/debian bookworm main\n")
    assert images.apt_mirror(tmp_path) == "http://other.example/debian"
    (tmp_path / "sources.list").write_text("deb http://other.example/debian trixie main\n")
    with pytest.raises(images.ImageBuildError, match="bookworm"):
        images.apt_mirror(tmp_path)
    # and this machine's own configuration names a mirror
    assert images.apt_mirror().startswith("http")


def test_builds_are_skipped_while_their_inputs_are_unchanged():
    client = images.docker_client()
    built = images.build_desktop(client, "xfce", log=lambda m: None)
    assert built.cached, "the xfce image was rebuilt although nothing changed (make docker built it)"
    label = client.images.get(images.desktop_tag("xfce")).labels[images.LABEL]
    assert label and len(label) == 24


def test_debootstrap_base_from_the_machines_mirror():
    """The no-registry path of `images build`: debootstrap from the apt mirror, imported (a tag of its own,
    so the images built on mcpworld/base keep their cache)."""
    client = images.docker_client()
    tag = "mcpworld-test/base:debootstrap"
    try:
        images.debootstrap_base(client, log=lambda m: None, tag=tag)
        out = client.containers.run(tag, ["sh", "-c", "cat /etc/debian_version; grep -h URIs: /etc/apt/sources.list "
                                                      "/etc/apt/sources.list.d/* 2>/dev/null || cat /etc/apt/sources.list"],
                                    remove=True).decode()
        assert out.split()[0].startswith("12.")
        assert images.apt_mirror() in out
    finally:
        try:
            client.images.remove(tag, force=True)
        except Exception:
            pass


async def test_only_the_folders_the_app_declares_are_mounted(denv):
    out = await _bash(denv, "ls /opt/mcpworld/src /opt/mcpworld/src/hooks /opt/mcpworld/src/snapshots 2>&1")
    assert "probe_runtime" in out and "anki" in out
    assert "obs" not in out and "tasks" not in out, "another app's folders or the task files are visible inside"
