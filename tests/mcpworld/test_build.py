"""Source builds end to end on a small Debian source package (GNU hello): fetched through deb-src lines
derived from the machine's apt sources, built with -O0 -g and symbol tables, laid out as bin/ lib/ share/,
cached; a failed build names its step; Frida finds an internal (static) function of the source build by
its symbol and reports a clear hook_missing on the stripped packaged binary; the environments put a build
in front of the packaged app."""

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import frida
import pytest

from mcpworld import build, paths
from mcpworld.envs.local import LocalEnvironment
from mcpworld.install import apt_install

PACKAGE = "hello"


def mcpworld(*args: str, builds: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mcpworld.cli", *args], capture_output=True, text=True, timeout=1800,
                          cwd=paths.ROOT, env={**os.environ, "MCPWORLD_BUILDS": str(builds), "COLUMNS": "200"})


@pytest.fixture(scope="module")
def hello_build(tmp_path_factory) -> Path:
    builds = tmp_path_factory.mktemp("builds")
    for folder in [builds, *builds.parents]:  # the app's user runs the build from here, as from builds/
        folder.chmod(folder.stat().st_mode | 0o005)
    r = mcpworld("apps", "build", "--from-source", "--package", PACKAGE, builds=builds)
    assert r.returncode == 0, r.stdout + r.stderr
    folders = [p for p in builds.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(folders) == 1, folders
    return folders[0]


def test_deb_src_lines_come_from_the_machines_sources(tmp_path):
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://mirror.invalid/off\nSuites: bookworm\nComponents: main\nEnabled: no\n")
    (apt / "sources.list").write_text("# a comment\ndeb [arch=amd64 signed-by=/k.gpg] http://other.invalid/debian bookworm main contrib\n")
    text = build.deb_src_sources(apt)
    stanzas = [dict(line.split(": ", 1) for line in s.splitlines()) for s in text.strip().split("\n\n")]
    assert stanzas == [
        {"Types": "deb deb-src", "URIs": "http://mirror.invalid/debian", "Suites": "bookworm bookworm-updates",
         "Components": "main", "Signed-By": "/usr/share/keyrings/debian-archive-keyring.gpg"},
        {"Types": "deb deb-src", "URIs": "http://other.invalid/debian", "Suites": "bookworm",
         "Components": "main contrib", "Signed-By": "/k.gpg"}]
    empty = tmp_path / "empty"
    (empty / "sources.list.d").mkdir(parents=True)
    with pytest.raises(Exception, match="no apt sources"):
        build.deb_src_sources(empty)


def test_a_source_build_has_debug_information_and_runs(hello_build):
    info = build.find(hello_build)
    assert info.package == PACKAGE and info.debug and "noopt" in info.flags and "nostrip" in info.flags
    assert hello_build.name == build.build_id(PACKAGE, info.version, build.BuildOptions())
    binary = hello_build / "bin" / "hello"
    assert subprocess.run([binary], capture_output=True, text=True).stdout.strip() == "Hello, world!"
    sections = subprocess.run(["readelf", "-S", "-W", binary], capture_output=True, text=True).stdout
    assert ".symtab" in sections and ".debug_info" in sections
    # every compile unit's last -O is -O0, whatever the build system appended (the compiler wrappers)
    info_dump = subprocess.run(["readelf", "--debug-dump=info", binary], capture_output=True, text=True).stdout
    producers = [line for line in info_dump.splitlines() if "DW_AT_producer" in line and "GNU C" in line]
    assert producers and all(re.findall(r" -O(\w*)", p)[-1] == "0" for p in producers), producers[:3]
    symbols = subprocess.run(["readelf", "-s", "-W", binary], capture_output=True, text=True).stdout
    assert any(line.split()[-1] == "print_help" and "LOCAL" in line for line in symbols.splitlines() if line.split())
    assert (hello_build / "share").is_dir() and (hello_build / "build.log").is_file()
    assert info.size_bytes > 0 and info.seconds > 0


def test_a_second_build_with_the_same_inputs_is_the_cached_one(hello_build):
    before = build.find(hello_build)
    r = mcpworld("apps", "build", "--from-source", "--package", PACKAGE, builds=hello_build.parent)
    assert r.returncode == 0 and "cached" in r.stdout, r.stdout + r.stderr
    assert build.find(hello_build) == before  # not rebuilt
    # other flags are another build (the jobs count is not a flag: it does not change what is built)
    assert build.build_id(PACKAGE, before.version, build.BuildOptions(jobs=1)) == hello_build.name
    assert build.build_id(PACKAGE, before.version, build.BuildOptions(debug=False)) != hello_build.name


def test_a_failed_build_names_its_step_and_keeps_its_log(tmp_path):
    r = mcpworld("apps", "build", "--from-source", "--package", "no-such-source-package-mcpworld", builds=tmp_path)
    assert r.returncode == 1
    assert "failed at 'sources'" in r.stderr and "no source package 'no-such-source-package-mcpworld'" in r.stderr
    log = tmp_path / "no-such-source-package-mcpworld.log"
    assert log.is_file() and "== sources" in log.read_text()
    assert "log: " + str(log) in r.stderr.replace("\n", "")


def hook(binary: str, name: str) -> list[dict]:
    """Spawn `binary --help` under Frida with the hook prelude and a hook on `name`; the events it sent."""
    prelude = (paths.CODE_ROOT / "probe_runtime" / "frida" / "prelude.js").read_text()
    script_text = prelude + f"\nmcpworld.hook({json.dumps(name)}, {{onEnter() {{ mcpworld.emit('entered', {{}}); }}}});\n" \
                            "send({ready: 1});"
    events, ready, ended = [], threading.Event(), threading.Event()
    device = frida.get_local_device()
    pid = device.spawn([binary, "--help"], stdio="pipe")
    session = device.attach(pid)
    session.on("detached", lambda *a: ended.set())

    def on_message(message, data):
        payload = message.get("payload") or {}
        if payload.get("ready"):
            ready.set()
        elif payload.get("mcpworld"):
            events.append(payload)

    script = session.create_script(script_text)
    script.on("message", on_message)
    script.load()
    assert ready.wait(10)
    device.resume(pid)
    assert ended.wait(20)
    return events


def test_frida_finds_an_internal_function_in_the_source_build_only(hello_build):
    events = hook(str(hello_build / "bin" / "hello"), "print_help")
    assert [e["event"] for e in events] == ["entered"]
    apt_install([PACKAGE])  # the packaged, stripped binary: the function is internal, so it is not there
    events = hook("/usr/bin/hello", "print_help")
    assert [e["event"] for e in events] == ["hook_missing"]
    assert events[0]["payload"]["function"] == "print_help" and "source build" in events[0]["payload"]["hint"]


def test_environments_put_the_build_first(hello_build):
    async def which() -> str:
        env = LocalEnvironment(window_manager=False, app_build=hello_build)
        await env.open()
        try:
            r = await env.exec(["sh", "-c", "command -v hello; echo $LD_LIBRARY_PATH"])
            return r.stdout
        finally:
            await env.close()

    out = asyncio.run(which()).split("\n")
    assert out[0] == str(hello_build / "bin" / "hello")
    assert out[1].split(":")[0] == str(hello_build / "lib")
