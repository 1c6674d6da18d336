"""The files in the folders a task works in, as part of the app's state (`[sources.state_query] work_dirs`):
each file (and folder) by its path under the home, with its size and hash, and read the way an app reads it:
an image's format and size, a PDF's pages and text, a small text file's text, and whatever the app's own
`read_file(path)` makes of its formats (a FreeCAD document's objects). A file the task asks for is then checked
by what it holds; a file nobody asked for is a change like any other.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_FILES = 2000             # per folder: a folder flooded with files is cut off (and says so)
MAX_HASH = 64 * 1024 * 1024  # larger files are compared by size and modification time only
MAX_TEXT = 64 * 1024
MAX_PDF_TEXT = 4000
TEXT_SUFFIXES = {".txt", ".md", ".csv", ".tsv", ".json", ".xml", ".svg", ".html", ".htm", ".py", ".js", ".ts",
                 ".css", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".log", ".sh", ".geojson", ".qml",
                 ".sld", ".wkt", ".prj", ".gpx", ".kml", ".obj", ".mtl", ".stl", ".ply", ".dxf", ".step", ".stp",
                 ".iges", ".igs", ".srt", ".vtt", ".c", ".h", ".cpp", ".java", ".rs", ".go", ".rb", ".php"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp"}


def read_work_files(dirs: list[Path], home: Path, ignore: list[str] = (),
                    read_file: Callable[[str], dict | None] | None = None) -> list[dict[str, Any]]:
    """Every file and folder under `dirs` (host paths), by its path relative to `home`, in a stable order."""
    out: list[dict[str, Any]] = []
    for root in dirs:
        if not root.is_dir():
            continue
        count = 0
        for folder, subdirs, names in os.walk(root):
            rel_folder = Path(folder).relative_to(home)
            subdirs[:] = sorted(d for d in subdirs if not _ignored(rel_folder / d, ignore))
            if Path(folder) != root:
                out.append({"path": f"{rel_folder}/", "kind": "folder"})
            for name in sorted(names):
                rel = rel_folder / name
                if _ignored(rel, ignore):
                    continue
                count += 1
                if count > MAX_FILES:
                    out.append({"path": f"{rel_folder}/...", "kind": "cut", "error": f"over {MAX_FILES} files"})
                    break
                out.append(describe(Path(folder) / name, str(rel), read_file))
            if count > MAX_FILES:
                break
    return out


def _ignored(rel: Path, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(rel.name, p) or fnmatch.fnmatch(str(rel), p) for p in patterns)


def describe(path: Path, rel: str, read_file: Callable[[str], dict | None] | None = None) -> dict[str, Any]:
    """One file: path, size, hash, and what it holds as its format is read."""
    item: dict[str, Any] = {"path": rel, "kind": "file"}
    try:
        if path.is_symlink():
            return {**item, "kind": "link", "target": os.readlink(path)}
        st = path.stat()
        item["size"] = st.st_size
        if st.st_size > MAX_HASH:
            item["mtime"] = int(st.st_mtime)
        else:
            data = path.read_bytes()
            item["sha256"] = hashlib.sha256(data).hexdigest()
            suffix = path.suffix.lower()
            if suffix in TEXT_SUFFIXES and len(data) <= MAX_TEXT:
                item["text"] = data.decode("utf-8", "replace")
    except OSError as e:
        return {**item, "error": str(e)}
    suffix = path.suffix.lower()
    try:
        if suffix in IMAGE_SUFFIXES:
            item["image"] = _image(path)
        elif suffix == ".pdf":
            item["pdf"] = _pdf(path)
        if read_file is not None:
            found = read_file(str(path))
            if found is not None:
                item["content"] = found
    except Exception as e:  # a file that does not parse is itself a finding, not a failed query
        item["error"] = f"{type(e).__name__}: {e}"
    return item


def _image(path: Path) -> dict[str, Any]:
    from PIL import Image

    with Image.open(path) as im:
        return {"format": im.format, "width": im.width, "height": im.height, "mode": im.mode}


def _pdf(path: Path) -> dict[str, Any]:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    text = ""
    for page in reader.pages:
        if len(text) >= MAX_PDF_TEXT:
            break
        text += (page.extract_text() or "") + "\n"
    box = reader.pages[0].mediabox if reader.pages else None
    return {"pages": len(reader.pages), "text": text[:MAX_PDF_TEXT],
            **({"width": round(float(box.width), 1), "height": round(float(box.height), 1)} if box else {})}
