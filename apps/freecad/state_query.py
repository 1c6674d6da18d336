"""FreeCAD's end-of-run state, read live through the probe's bridge with the run's secret: every open
document and its objects, the active workbench and the preferences (hooks/freecad/mcpworld_probe/state.py).
A FreeCAD that is gone has nothing to read: the query fails, and so does the task's success check.

Each open document's file is also read from disk (`files`, a list of {path, exists, objects}): the objects FreeCAD wrote into it (type and
plain property values from the FCStd's Document.xml), so a check can ask that the saved file, not only
the live document, holds the result."""

from __future__ import annotations

import zipfile
import xml.etree.ElementTree as ET
from pathlib import Path

from mcp_servers.bridge import Bridge

MAX_XML = 20 * 1024 * 1024
VALUE_TAGS = {"Float": float, "Integer": int, "Bool": lambda v: v == "true", "String": str}


def read_fcstd(path: str) -> dict:
    """The objects a saved FreeCAD document holds: [{"name", "type", "props": {name: value}}], or why not."""
    p = Path(path)
    if not p.is_file():
        return {"exists": False}
    try:
        with zipfile.ZipFile(p) as z:
            info = z.getinfo("Document.xml")
            if info.file_size > MAX_XML:
                return {"exists": True, "error": "Document.xml too large"}
            root = ET.fromstring(z.read(info))
    except (zipfile.BadZipFile, KeyError, ET.ParseError, OSError) as e:
        return {"exists": True, "error": f"not a FreeCAD document: {e}"}
    objects = {o.get("name"): {"name": o.get("name"), "type": o.get("type"), "props": {}}
               for o in root.iter("Object") if o.get("type")}
    for data in root.iter("ObjectData"):
        for o in data.iter("Object"):
            rec = objects.get(o.get("name"))
            if rec is None:
                continue
            for prop in o.iter("Property"):
                for child in prop:
                    conv = VALUE_TAGS.get(child.tag)
                    if conv is not None and child.get("value") is not None:
                        try:
                            rec["props"][prop.get("name")] = conv(child.get("value"))
                        except ValueError:
                            pass
                        break
    return {"exists": True, "objects": list(objects.values())}


def read_on_host(ctx, path: str) -> dict:
    """Read a document FreeCAD reports (a path inside its environment) from the host, and only inside the
    environment's home: a path elsewhere would name a host file in a container run."""
    host = Path(ctx.host_path(path)).resolve()
    home = Path(ctx.values.home).resolve()
    if not host.is_relative_to(home):
        return {"exists": False, "error": "outside the home folder"}
    return read_fcstd(str(host))


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "FreeCAD", timeout=ctx.timeout).call("state", {})
    files = [{"path": d["file"], **read_on_host(ctx, d["file"])} for d in state.get("documents", []) if d.get("file")]
    return {**state, "files": files, "read_from": "bridge"}
