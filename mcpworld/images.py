"""Container images: a Debian base, the desktop images in containers/ (xfce, kde), and app layers.

Each image carries a label with a hash of everything it is built from (Dockerfile, files copied
in, build arguments, the image it starts FROM), so a build is skipped while its inputs are unchanged.
Python packages are fetched on the host with pip (which knows the host's package index) and
installed offline inside the build: the images need no network beyond Debian's package mirror.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mcpworld import paths
from mcpworld.config.app import AppConfig
from mcpworld.install import NOT_DUMPABLE_SOURCE, missing_npm, npm_prefix
from mcpworld.errors import MCPWorldError

CONTAINERS_DIR = paths.CONTAINERS_DIR
DESKTOPS = ("xfce", "kde")
LABEL = "org.mcpworld.inputs"
RELEASE = "bookworm"
BASE_TAG = f"mcpworld/base:{RELEASE}"
# what the in-container parts (Frida bridge, Python probes) import; pinned to the host's versions
RUNTIME_PACKAGES = ("frida", "websockets")
WHEEL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcpworld" / "wheels"

Log = Callable[[str], None]


class ImageBuildError(MCPWorldError):
    pass


def desktop_tag(desktop: str) -> str:
    return f"mcpworld/{desktop}:latest"


def app_tag(desktop: str, app_id: str) -> str:
    return f"mcpworld/{desktop}-{app_id}:latest"


def docker_client():
    import docker

    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except docker.errors.DockerException as e:
        raise MCPWorldError(f"no Docker engine answers ({e}); install docker.io and start dockerd "
                            "(the Makefile's `docker` target does both)") from None
    return client


def start_engine(timeout: float = 60.0, log: Log = print) -> None:
    """Start dockerd in the background if no engine answers (machines where it is installed but not running)."""
    import docker

    try:
        docker.from_env(timeout=5).ping()
        return
    except docker.errors.DockerException:
        pass
    dockerd = shutil.which("dockerd")
    if not dockerd:
        raise MCPWorldError("dockerd is not installed (apt-get install docker.io)")
    log_path = Path(tempfile.gettempdir()) / "mcpworld-dockerd.log"
    log(f"starting {dockerd} (log: {log_path})")
    with open(log_path, "ab") as out:
        subprocess.Popen([dockerd], stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            docker.from_env(timeout=5).ping()
            return
        except docker.errors.DockerException:
            time.sleep(0.5)
    raise MCPWorldError(f"dockerd did not answer within {timeout:.0f}s; see {log_path}")


# -- the base image --------------------------------------------------------------------
def apt_mirror(sources_dir: Path = Path("/etc/apt"), release: str = RELEASE) -> str:
    """The Debian mirror this machine's apt uses for `release` (deb822 .sources files, then sources.list)."""
    for f in sorted((sources_dir / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", f.read_text()):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            if "deb" in fields.get("Types", "").split() and release in fields.get("Suites", "").split():
                return fields["URIs"].split()[0]
    for f in [sources_dir / "sources.list", *sorted((sources_dir / "sources.list.d").glob("*.list"))]:
        if f.exists():
            for line in f.read_text().splitlines():
                m = re.match(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line.strip())
                if m and m.group(2) == release:
                    return m.group(1)
    raise ImageBuildError(f"no apt source for Debian {release} in {sources_dir} (sources.list.d/*.sources or sources.list)")


def _labelled(client, tag: str) -> str | None:
    import docker

    try:
        return client.images.get(tag).labels.get(LABEL)
    except docker.errors.ImageNotFound:
        return None


def ensure_base(client, base: str = "auto", log: Log = print) -> str:
    """The image the desktops start FROM: `base` itself if it is an image name (present or pullable);
    with "auto", debian:<release> where a registry answers, else a debootstrap of the apt mirror."""
    import docker

    if base not in ("auto", "debootstrap"):
        try:
            client.images.get(base)
        except docker.errors.ImageNotFound:
            log(f"pulling {base}")
            client.images.pull(base)
        return base
    try:
        client.images.get(BASE_TAG)
        return BASE_TAG
    except docker.errors.ImageNotFound:
        pass
    if base == "auto":
        try:
            client.images.pull("debian", tag=RELEASE)
            client.images.get(f"debian:{RELEASE}").tag("mcpworld/base", RELEASE)
            log(f"base: debian:{RELEASE} from the registry")
            return BASE_TAG
        except docker.errors.APIError as e:
            log(f"no registry ({str(e).splitlines()[0][:120]}); making the base with debootstrap")
    debootstrap_base(client, log)
    return BASE_TAG


def debootstrap_base(client, log: Log = print, tag: str = BASE_TAG) -> str:
    """A minimal Debian root from this machine's apt mirror, imported as an image; the image id."""
    if not shutil.which("debootstrap"):
        raise ImageBuildError("debootstrap is not installed (apt-get install debootstrap)")
    mirror = apt_mirror()
    with tempfile.TemporaryDirectory(prefix="mcpworld-base-") as tmp:
        root = Path(tmp) / "root"
        log(f"debootstrap --variant=minbase {RELEASE} from {mirror}")
        t = time.perf_counter()
        r = subprocess.run(["debootstrap", "--variant=minbase", RELEASE, str(root), mirror],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise ImageBuildError(f"debootstrap failed: {(r.stderr or r.stdout)[-2000:]}")
        tarball = Path(tmp) / "root.tar"
        subprocess.run(["tar", "-C", str(root), "-cf", str(tarball), "."], check=True)
        repository, _, version = tag.partition(":")
        client.api.import_image_from_file(str(tarball), repository=repository, tag=version or "latest")
        log(f"base image {tag} made in {time.perf_counter() - t:.0f}s")
    return client.images.get(tag).id


# -- builds ----------------------------------------------------------------------------
@dataclass
class Built:
    tag: str
    cached: bool
    seconds: float
    size_mb: float


def _hash(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def image_python_version() -> str:
    """The version of Debian's python3 the images get (the host's apt sees the same release): wheels are
    chosen for it, e.g. 3.11.2, where PyPI's newest releases of some packages want 3.11.5."""
    r = subprocess.run(["apt-cache", "show", "python3"], capture_output=True, text=True)
    m = re.search(r"^Version: (\d+\.\d+\.\d+)", r.stdout, re.M)
    if not m:
        raise ImageBuildError("cannot tell which python3 Debian's packages have (apt-cache show python3)")
    return m.group(1)


def runtime_requirements() -> list[str]:
    return [f"{name}=={importlib.metadata.version(name)}" for name in RUNTIME_PACKAGES]


def fetch_wheels(requirements: list[str], python: str, dest: Path, log: Log) -> None:
    """pip-download wheels for the requirements (cached per requirement set) into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "requirements.txt").write_text("".join(f"{r}\n" for r in requirements))
    if not requirements:
        return
    cache = WHEEL_CACHE / _hash(python, *requirements)
    if not (cache / ".complete").exists():
        log(f"pip download {' '.join(requirements)} (for Python {python})")
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version",
                            python, "-d", str(cache), *requirements], capture_output=True, text=True)
        if r.returncode != 0:
            raise ImageBuildError(f"pip download failed: {r.stderr[-2000:]}")
        (cache / ".complete").touch()
    for whl in cache.glob("*.whl"):
        os.link(whl, dest / whl.name) if whl.stat().st_dev == dest.stat().st_dev else shutil.copy(whl, dest)


def _cached(client, tag: str, inputs: str, force: bool) -> Built | None:
    if force or _labelled(client, tag) != inputs:
        return None
    return Built(tag, True, 0.0, client.images.get(tag).attrs["Size"] / 1e6)


def _build(client, tag: str, context: Path, inputs: str, buildargs: dict[str, str], log: Log,
           nocache: bool = False) -> Built:
    """docker build context -> tag, labelled with its inputs."""
    t = time.perf_counter()
    log(f"building {tag}")
    last = []
    for chunk in client.api.build(path=str(context), tag=tag, buildargs=buildargs, labels={LABEL: inputs},
                                  nocache=nocache, rm=True, forcerm=True, decode=True):
        if "error" in chunk:
            raise ImageBuildError(f"{tag}: {chunk['error'].strip()}\n" + "".join(last[-30:]))
        line = chunk.get("stream", "")
        if line:
            last.append(line)
            if line.startswith("Step "):
                log(f"  {line.strip()}")
    return Built(tag, False, time.perf_counter() - t, client.images.get(tag).attrs["Size"] / 1e6)


def build_desktop(client, desktop: str, base: str = "auto", log: Log = print, force: bool = False,
                  nocache: bool = False) -> Built:
    """force: build even if an image with these inputs exists; nocache: and reuse no cached layer (a cold build)."""
    if desktop not in DESKTOPS:
        raise ImageBuildError(f"unknown desktop '{desktop}' (known: {', '.join(DESKTOPS)})")
    base_tag = ensure_base(client, base, log)
    dockerfile = (CONTAINERS_DIR / desktop / "Dockerfile").read_bytes()
    start = (CONTAINERS_DIR / "common" / "mcpworld-desktop").read_bytes()
    reqs = runtime_requirements()
    python = image_python_version()
    inputs = _hash(dockerfile, start, python, *reqs, client.images.get(base_tag).id)
    tag = desktop_tag(desktop)
    if cached := _cached(client, tag, inputs, force):
        return cached
    with tempfile.TemporaryDirectory(prefix=f"mcpworld-{desktop}-") as tmp:
        ctx = Path(tmp)
        (ctx / "Dockerfile").write_bytes(dockerfile)
        (ctx / "mcpworld-desktop").write_bytes(start)
        (ctx / "mcpworld-desktop").chmod(0o755)
        fetch_wheels(reqs, python, ctx / "runtime-wheels", log)
        return _build(client, tag, ctx, inputs, {"BASE": base_tag}, log, nocache)


def _link_tree(src: Path, dst: Path) -> None:
    """A copy of a folder for a build context: hard links where the file system allows, copies otherwise."""
    def link(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)
    shutil.copytree(src, dst, symlinks=True, copy_function=link)


def build_app(client, desktop: str, app: AppConfig, log: Log = print, force: bool = False,
              nocache: bool = False) -> Built:
    """The app layer: desktop image + the app's Debian and Python packages."""
    desktop_image = client.images.get(desktop_tag(desktop))
    dockerfile = (CONTAINERS_DIR / "app" / "Dockerfile").read_bytes()
    prefix = npm_prefix(app)
    if app.install.npm:
        # the npm packages (built here, native modules included) go in as the host has them, at the same path
        if missing := missing_npm(app):
            raise ImageBuildError(f"{app.id}: {', '.join(missing)} not installed here: run `mcpworld apps install {app.id}`")
        dockerfile += f"USER root\nCOPY app-npm {prefix}\nUSER app\n".encode()
    for i, f in enumerate(app.install.system_files):  # root's in the image as on the host
        dockerfile += f"USER root\nCOPY app-etc/{i} {f.to}\nUSER app\n".encode()
    apt = " ".join(app.install.apt)
    python = image_python_version()
    npm_inputs = [*app.install.npm, app.install.node or ""] if app.install.npm else []
    if app.install.node:
        npm_inputs.append(NOT_DUMPABLE_SOURCE.read_text())
    etc = [(app.folder / f.from_).read_text() for f in app.install.system_files]
    inputs = _hash(dockerfile, apt, python, *app.install.pip, *npm_inputs, *etc, desktop_image.id)
    tag = app_tag(desktop, app.id)
    if cached := _cached(client, tag, inputs, force):
        return cached
    with tempfile.TemporaryDirectory(prefix=f"mcpworld-{desktop}-{app.id}-") as tmp:
        ctx = Path(tmp)
        (ctx / "Dockerfile").write_bytes(dockerfile)
        if app.install.npm:
            _link_tree(prefix, ctx / "app-npm")
        for i, f in enumerate(app.install.system_files):
            (ctx / "app-etc").mkdir(exist_ok=True)
            shutil.copyfile(app.folder / f.from_, ctx / "app-etc" / str(i))
            os.chmod(ctx / "app-etc" / str(i), 0o644)  # COPY keeps the mode; the owner is root
        fetch_wheels(list(app.install.pip), python, ctx / "app-wheels", log)
        return _build(client, tag, ctx, inputs, {"DESKTOP": desktop_tag(desktop), "APT_PACKAGES": apt}, log, nocache)


def build_all(client, desktops: list[str], apps: list[AppConfig], base: str = "auto", log: Log = print,
              force: bool = False) -> list[Built]:
    out = []
    for desktop in desktops:
        out.append(build_desktop(client, desktop, base, log, force))
        for app in (a for a in apps if a.available):
            out.append(build_app(client, desktop, app, log, force))
    return out


def describe(client) -> list[dict]:
    """The mcpworld images present: tag, size, inputs label, creation time."""
    rows = []
    for image in client.images.list(name="mcpworld/*"):
        for tag in image.tags:
            rows.append({"tag": tag, "size_mb": round(image.attrs["Size"] / 1e6), "inputs": image.labels.get(LABEL, ""),
                         "created": image.attrs.get("Created", "")[:19]})
    return sorted(rows, key=lambda r: r["tag"])

