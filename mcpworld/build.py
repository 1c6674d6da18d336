"""Source builds: an app's Debian source package built with debug information, so that Frida hooks can
name its internal functions (the MCPWorld paper's B.1), installed into a build folder (bin/, lib/,
share/) that `--app-build` puts in front of the packaged app on either backend.

The steps, each named when it fails (its log kept): sources (deb-src lines derived from the machine's own
apt sources, in a private apt configuration, so the machine's is untouched), fetch (`apt-get source`),
build-deps (`apt-get build-dep`), build (`dpkg-buildpackage -b`), install (the built .debs unpacked and
laid out). A build is cached by package, source version and flags: a second call with the same inputs
returns at once.

Debug builds use DEB_BUILD_OPTIONS `noopt nostrip`: -O0 -g, symbol tables kept. -O0 rather than -Og
because -Og still inlines small static and member functions, and an inlined function has no address to
hook; the cost is a slower app, which the bench measures. Some build systems append their own release
flags after CFLAGS (qmake adds -O2 last, and the last -O wins), so debug builds also run the compilers
through wrappers that put -O0 after everything else.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from mcpworld import paths
from mcpworld.errors import MCPWorldError

TOOLS = ["dpkg-dev", "build-essential", "fakeroot"]  # what fetching and building a Debian source needs
APT_SOURCES = Path("/etc/apt")
LAST_FLAG = "-O0"  # what the debug build's compiler wrappers append
COMPILERS = ["cc", "c++", "gcc", "g++"]  # and their target-prefixed names, when present


class BuildError(MCPWorldError):
    """A source build failed: the step, and the log that says why."""

    def __init__(self, step: str, log: Path, detail: str = ""):
        self.step, self.log = step, log
        super().__init__(f"source build failed at '{step}'{': ' + detail if detail else ''} (log: {log})")


class BuildInfo(BaseModel):
    """build.json in a finished build folder: what was built, how, and what it cost."""

    id: str
    package: str
    version: str
    debug: bool
    flags: str             # DEB_BUILD_OPTIONS, and the compiler wrappers' last flag (BuildOptions.recipe)
    debs: list[str]        # the binary packages laid out in the folder
    seconds: float
    size_bytes: int
    built: float

    def describe(self) -> str:
        return f"source {self.package} {self.version} ({'-O0 -g' if self.debug else 'packaged flags'}, {self.id})"


@dataclass(frozen=True)
class BuildOptions:
    debug: bool = True
    jobs: int = os.cpu_count() or 1

    @property
    def flags(self) -> str:
        """DEB_BUILD_OPTIONS without the jobs count: what decides what is built."""
        # nocheck: the package's test suite proves Debian's build, not ours, and can double the time
        return " ".join([*(["noopt", "nostrip"] if self.debug else []), "nocheck"])

    @property
    def recipe(self) -> str:
        """Everything that decides what is built: the flags, and the compiler wrappers when debug."""
        return self.flags + (f" cc-last={LAST_FLAG}" if self.debug else "")

    @property
    def deb_build_options(self) -> str:
        return f"{self.flags} parallel={self.jobs}"


def builds_dir() -> Path:
    """Where builds are kept: MCPWORLD_BUILDS, or builds/ in the content root (readable by the app's user)."""
    return Path(os.environ.get("MCPWORLD_BUILDS") or paths.ROOT / "builds")


def build_id(package: str, version: str, opts: BuildOptions) -> str:
    """package_version_flags: the jobs count does not change what is built, so it is not part of it."""
    digest = hashlib.sha256(opts.recipe.encode()).hexdigest()[:8]
    return f"{package}_{re.sub(r'[^A-Za-z0-9.+~-]', '_', version)}_{'debug' if opts.debug else 'release'}-{digest}"


def find(folder: Path) -> BuildInfo | None:
    """The build in a folder (`--app-build DIR`), or None when it holds no finished build."""
    f = Path(folder) / "build.json"
    return BuildInfo.model_validate_json(f.read_text()) if f.is_file() else None


def newest(source: str) -> Path | None:
    """The newest finished debug build of a Debian source package in builds/, or None."""
    root = builds_dir()
    found = [(info.built, f) for f in (root.iterdir() if root.is_dir() else [])
             if f.is_dir() and (info := find(f)) is not None and info.package == source and info.debug]
    return max(found)[1] if found else None


def compiler_wrappers(folder: Path) -> Path:
    """A folder of wrappers, one per C/C++ compiler on PATH, each running the real one with LAST_FLAG
    after its own arguments; put first on PATH, they win over flags a build system appends itself."""
    folder.mkdir(parents=True, exist_ok=True)
    prefixed = [Path(p).name for p in glob.glob("/usr/bin/*-linux-gnu-g[c+][c+]")]
    for name in COMPILERS + prefixed:
        real = shutil.which(name)
        if real is None:
            continue
        w = folder / name
        w.write_text(f'#!/bin/sh\nexec {real} "$@" {LAST_FLAG}\n')
        w.chmod(0o755)
    return folder


def deb_src_sources(apt: Path = APT_SOURCES) -> str:
    """The machine's own apt sources, each also as deb-src, in deb822 form (one-line entries converted)."""
    stanzas = []
    for f in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", f.read_text()):
            fields = {}
            for line in stanza.splitlines():
                m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                if m and not line.startswith("#"):
                    fields[m.group(1)] = m.group(2).strip()
            if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no":
                stanzas.append({**fields, "Types": "deb deb-src"})
    lists = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for f in (p for p in lists if p.is_file()):
        for line in f.read_text().splitlines():
            m = re.match(r"^\s*deb\s+(\[(?P<opts>[^\]]*)\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)\s*(?P<comps>.*)$", line)
            if not m:
                continue
            stanza = {"Types": "deb deb-src", "URIs": m["uri"], "Suites": m["suite"], "Components": m["comps"].strip()}
            for opt in (m["opts"] or "").split():
                key, _, value = opt.partition("=")
                if key == "signed-by":
                    stanza["Signed-By"] = value
            stanzas.append(stanza)
    if not stanzas:
        raise MCPWorldError(f"no apt sources in {apt}: a source build derives its deb-src lines from them")
    return "\n\n".join("\n".join(f"{k}: {v}" for k, v in s.items() if v) for s in stanzas) + "\n"


class SourceBuild:
    """One package's build; `run()` returns the finished build folder (cached)."""

    def __init__(self, package: str, opts: BuildOptions, root: Path | None = None,
                 on_step: Callable[[str], None] | None = None, on_line: Callable[[str], None] | None = None):
        self.package, self.opts = package, opts
        self.root = root or builds_dir()
        self.apt_dir = self.root / ".apt"
        self.on_step, self.on_line = on_step or (lambda s: None), on_line or (lambda s: None)
        self.step = ""
        self.log = self.root / f"{package}.log"

    # -- the private apt configuration -------------------------------------------------
    def _apt_options(self) -> list[str]:
        a = self.apt_dir
        return ["-o", f"Dir::Etc::SourceList={a / 'sources.list'}", "-o", f"Dir::Etc::SourceParts={a / 'sources.list.d'}",
                "-o", f"Dir::State::Lists={a / 'lists'}", "-o", f"Dir::Cache={a / 'cache'}"]

    def _apt(self, *args: str) -> list[str]:
        return [*([] if os.geteuid() == 0 else ["sudo"]), "apt-get", *self._apt_options(), *args]

    def _apt_cache(self, *args: str) -> list[str]:
        return ["apt-cache", *self._apt_options(), *args]

    def _prepare_apt(self) -> None:
        a = self.apt_dir
        for d in (a / "sources.list.d", a / "lists" / "partial", a / "cache" / "archives" / "partial"):
            d.mkdir(parents=True, exist_ok=True)
        (a / "sources.list").write_text("")
        (a / "sources.list.d" / "mcpworld-src.sources").write_text(deb_src_sources())

    # -- running a step ------------------------------------------------------------------
    def _enter(self, step: str) -> None:
        self.step = step
        self.on_step(step)
        with open(self.log, "a") as f:
            f.write(f"\n== {step} ({time.strftime('%H:%M:%S')})\n")

    def _run(self, argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
        """A step's command, its output appended to the log line by line; its output, or BuildError."""
        out: list[str] = []
        with open(self.log, "a") as log:
            log.write("$ " + " ".join(argv) + "\n")
            proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive", **(env or {})},
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                out.append(line)
                self.on_line(line.rstrip())
            rc = proc.wait()
        if rc != 0:
            last = next((line.strip() for line in reversed(out) if line.strip()), "")
            raise BuildError(self.step, self.log, f"{argv[0] if argv[0] != 'sudo' else argv[1]} exited {rc}: {last[:200]}")
        return "".join(out)

    # -- the build ------------------------------------------------------------------------
    def version(self) -> str:
        """The newest source version the machine's sources offer."""
        out = self._run(self._apt_cache("showsrc", "--only-source", self.package))
        versions = re.findall(r"^Version:\s*(\S+)", out, re.M)
        if not versions:
            raise BuildError(self.step, self.log, f"no source package '{self.package}' in the machine's sources")
        newest = versions[0]
        for v in versions[1:]:
            if subprocess.run(["dpkg", "--compare-versions", v, "gt", newest]).returncode == 0:
                newest = v
        return newest

    def run(self) -> tuple[Path, BuildInfo, bool]:
        """(the build folder, its build.json, whether it was already there)."""
        from mcpworld.install import apt_install

        self.root.mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        t0 = time.perf_counter()
        self._enter("sources")
        try:
            apt_install(TOOLS, log=lambda m: self._log_note(m))
        except subprocess.CalledProcessError as e:
            raise BuildError("sources", self.log, f"installing {' '.join(TOOLS)}: {e}") from None
        self._prepare_apt()
        self._run(self._apt("update", "-q"))
        version = self.version()
        bid = build_id(self.package, version, self.opts)
        folder = self.root / bid
        done = find(folder)
        if done is not None:
            self._log_note(f"cached: {folder}")
            return folder, done, True
        work = self.root / ".work" / bid
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)

        self._enter("fetch")
        self._run(self._apt("source", "-q", f"{self.package}={version}"), cwd=work)
        tree = next((p for p in work.iterdir() if p.is_dir() and (p / "debian").is_dir()), None)
        if tree is None:
            raise BuildError("fetch", self.log, "no unpacked source tree with a debian/ folder")

        self._enter("build-deps")
        self._run(self._apt("build-dep", "-y", "-q", "--no-install-recommends", f"{self.package}={version}"))

        self._enter("build")
        env = {"DEB_BUILD_OPTIONS": self.opts.deb_build_options}
        if self.opts.debug:
            env["PATH"] = f"{compiler_wrappers(work / 'cc')}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        self._run(["dpkg-buildpackage", "-b", "-uc", "-us", f"-j{self.opts.jobs}"], cwd=tree, env=env)

        self._enter("install")
        debs = sorted(p for p in work.glob("*.deb") if not p.name.split("_")[0].endswith("-dbgsym"))
        if not debs:
            raise BuildError("install", self.log, "the build made no .deb")
        stage = work / "stage"
        for deb in debs:
            self._run(["dpkg-deb", "-x", str(deb), str(stage)])
        tmp = folder.with_name(folder.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        usr = stage / "usr"
        shutil.copytree(usr if usr.is_dir() else stage, tmp, symlinks=True)
        info = BuildInfo(id=bid, package=self.package, version=version, debug=self.opts.debug,
                         flags=self.opts.recipe,
                         debs=[d.name for d in debs], seconds=round(time.perf_counter() - t0, 1),
                         size_bytes=sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file() and not p.is_symlink()),
                         built=time.time())
        (tmp / "build.json").write_text(info.model_dump_json(indent=1))
        shutil.copy(self.log, tmp / "build.log")
        for p in [tmp, *tmp.rglob("*")]:  # the app's user reads and runs it
            if not p.is_symlink():
                p.chmod(p.stat().st_mode | 0o044 | (0o011 if p.is_dir() or p.stat().st_mode & 0o100 else 0))
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)  # a build folder is whole or absent
        shutil.rmtree(work, ignore_errors=True)
        return folder, info, False

    def _log_note(self, message: str) -> None:
        with open(self.log, "a") as f:
            f.write(message + "\n")
        self.on_line(message)


def library_dirs(folder: Path, inside: str | None = None) -> list[str]:
    """The build's library folders for LD_LIBRARY_PATH (lib/ and its multiarch folder), named as seen from
    `inside` (the folder's path in a container) when given."""
    lib = Path(folder) / "lib"
    found = [lib, *sorted(Path(p) for p in glob.glob(str(lib / "*-linux-gnu")))]
    return [str(Path(inside) / p.relative_to(folder)) if inside else str(p) for p in found]


def build_env(folder: Path, path: str, inside: str | None = None) -> dict[str, str]:
    """PATH and LD_LIBRARY_PATH that put a build in front of the packaged app (`path`: the PATH it goes
    in front of; `inside`: the folder's path in a container)."""
    bin_dir = f"{inside}/bin" if inside else str(Path(folder) / "bin")
    return {"PATH": f"{bin_dir}:{path}", "LD_LIBRARY_PATH": ":".join(library_dirs(folder, inside))}
