"""Write qBittorrent's snapshot: files to share and their .torrent files, made here, with no tracker and no
web seed, so nothing a trial does can leave the machine. Run: python snapshots/qbittorrent/build.py

    base/Downloads/     the content of the torrents that are complete (they seed, to nobody)
    base/Torrents/      the .torrent files a task's set-up adds (through the WebUI, off the agent's log)
    base/Desktop/       a .torrent file the agent adds itself (template 174)

The session (which torrents qBittorrent has) is not a snapshot: its resume data names absolute paths,
and HOME differs per environment; a task's set-up adds the torrents it needs instead. The settings are
rendered per run by apps/qbittorrent/app.toml (ports, password, loopback only). Contents are pseudo-random
bytes from a fixed seed, so a rebuild makes the same torrents (the same info hashes).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import torf

HERE = Path(__file__).resolve().parent
PIECE = 64 * 1024

# name -> (files under it (a single file when the name itself is the file), complete in Downloads?)
TORRENTS: dict[str, tuple[dict[str, int], bool]] = {
    "sintel-trailer-480p.mp4": ({"": 400_000}, True),
    "open-data-census-2023": ({"population.csv": 120_000, "households.csv": 80_000, "README.txt": 4_000}, True),
    "debian-live-12-xfce.iso": ({"": 2_500_000}, False),
    "lecture-notes-physics.pdf": ({"": 800_000}, False),
}
DESKTOP = {"public-domain-poems.zip": 600_000}


def content(rng: random.Random, size: int) -> bytes:
    return rng.randbytes(size)


def make(name: str, files: dict[str, int], into: Path, seed: int) -> Path:
    """Write the content under into/name; its path."""
    rng = random.Random(seed)
    root = into / name
    if "" in files:
        root.parent.mkdir(parents=True, exist_ok=True)
        root.write_bytes(content(rng, files[""]))
    else:
        for fname, size in sorted(files.items()):
            (root / fname).parent.mkdir(parents=True, exist_ok=True)
            (root / fname).write_bytes(content(rng, size))
    return root


def torrent(path: Path, out: Path) -> None:
    t = torf.Torrent(path=path, piece_size=PIECE, private=True, created_by=None, creation_date=None,
                     randomize_infohash=False)
    t.generate()
    out.parent.mkdir(parents=True, exist_ok=True)
    t.write(out, overwrite=True)


def build() -> None:
    base = HERE / "base"
    shutil.rmtree(base, ignore_errors=True)
    scratch = HERE / ".scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    for seed, (name, (files, complete)) in enumerate(sorted(TORRENTS.items())):
        made = make(name, files, base / "Downloads" if complete else scratch, seed)
        torrent(made, base / "Torrents" / f"{name}.torrent")
    for seed, (name, size) in enumerate(sorted(DESKTOP.items()), start=100):
        made = make(name, {"": size}, scratch, seed)
        torrent(made, base / "Desktop" / f"{name}.torrent")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    build()
