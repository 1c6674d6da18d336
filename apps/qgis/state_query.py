"""QGIS's state, read live through the probe's bridge with the run's secret (hooks/qgis/mcpworld_probe/state.py,
`read(full=True)`): the project and its stored properties, every layer by its id with its whole style and a
digest of its features, the Layers panel's groups, print layouts, bookmarks, map themes, relations, annotations
and the map canvas. A QGIS that is gone has no project to read: the query fails, and so does the task's check.

`read_file` opens the project files in the work folders (.qgz, .qgs) as QGIS writes them, so a saved project is
compared by what it holds: its title, CRS and layers."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.etree import ElementTree

from mcp_servers.bridge import Bridge


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "QGIS", timeout=ctx.timeout).call("query_state", {})
    return {**state, "read_from": "bridge"}


def read_file(path: str) -> dict | None:
    """A QGIS project file: its title, CRS, layers (id, name, provider, source) and the Layers panel's order."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".qgz":
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
            qgs = [n for n in names if n.lower().endswith(".qgs")]
            if len(qgs) != 1:
                return {"members": names, "error": "no single .qgs inside"}
            root = ElementTree.fromstring(z.read(qgs[0]))
        return {**_project(root), "members": sorted(names)}
    if suffix == ".qgs":
        return _project(ElementTree.parse(p).getroot())
    return None


def _project(root: ElementTree.Element) -> dict:
    layers = [{"id": _text(m, "id"), "name": _text(m, "layername"), "provider": _text(m, "provider"),
               "source": _text(m, "datasource")} for m in root.iterfind("./projectlayers/maplayer")]
    tree = root.find("./layer-tree-group")
    return {"title": _text(root, "title") or root.get("projectname", ""),
            "crs": _text(root, "./projectCrs/spatialrefsys/authid"),
            "layers": layers,
            "order": [node.get("id") for node in tree.iter("layer-tree-layer")] if tree is not None else []}


def _text(elem: ElementTree.Element, path: str) -> str:
    found = elem.find(path)
    return (found.text or "") if found is not None else ""
