"""FreeCAD's state, read live through the probe's bridge with the run's secret: every open document (its file,
label, whether it has unsaved changes), every object of each (`objects`), the active workbench and the
preferences (hooks/freecad/mcpworld_probe/state.py). A FreeCAD that is gone has nothing to read: the query
fails, and so does the task's success check.

The files in the work folders (`[sources.state_query] work_dirs`) join the state as the core's `files`;
a FreeCAD document among them (.FCStd) is read as FreeCAD reads it back (`read_file`): the objects its
Document.xml holds, each with its type, label, plain property values, placement, a Draft object's kind and
a sketch's geometry, in the same shape as the live document's objects. The XML is parsed here, on the host:
FreeCAD itself is never asked to open a file the agent may have written (a document names Python modules
that FreeCAD would import to restore its feature objects)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from mcp_servers.bridge import Bridge

MAX_XML = 20 * 1024 * 1024
# the property types and the skipped properties of a live read (hooks/freecad/mcpworld_probe/state.py)
PLAIN = {"App::PropertyLength", "App::PropertyDistance", "App::PropertyFloat", "App::PropertyAngle",
         "App::PropertyInteger", "App::PropertyIntegerConstraint", "App::PropertyFloatConstraint",
         "App::PropertyBool", "App::PropertyEnumeration", "App::PropertyString", "App::PropertyQuantity",
         "App::PropertyQuantityConstraint", "App::PropertyPercent", "App::PropertyLink",
         "App::PropertyPrecision", "App::PropertyAcceleration", "App::PropertyLinkSub",
         "App::PropertyLinkSubList", "App::PropertyLinkList", "App::PropertyLinkSubListHidden"}
SKIP = {"Label", "Label2", "Visibility", "ExpressionEngine", "Placement", "Shape", "_Body", "Group",
        "Origin", "Tip", "BaseFeature", "AddSubShape", "SuppressedShape", "Support", "MapMode"}
# a sketch element's geometry mode flags, read from the right: bit 1 is construction geometry
CONSTRUCTION_BIT = 1


def _num(v: str | float) -> float:
    return round(float(v), 6)


def _prop_value(prop: ET.Element):
    """A plain property's value as the live read gives it (an enumeration by its index: Document.xml keeps
    no names for FreeCAD's own enumerations)."""
    for child in prop:
        tag, value = child.tag, child.get("value")
        if tag == "Float":
            return _num(value)
        if tag == "Integer":
            return int(value)
        if tag == "Bool":
            return value == "true"
        if tag == "String":
            return value
        if tag == "Link":
            return value or None
        if tag == "LinkSub":
            return [child.get("value"), sorted(s.get("value") for s in child.iter("Sub"))] if child.get("value") else None
        if tag == "LinkList":
            return [link.get("value") for link in child.iter("Link")]
        if tag == "LinkSubList":
            return [[link.get("obj"), link.get("sub")] for link in child.iter("Link")]
    raise ValueError("no plain value")


def _placement(el: ET.Element) -> dict:
    """A PropertyPlacement's attributes as the live read gives them: position, axis, angle in degrees."""
    return {"position": [_num(el.get(k)) for k in ("Px", "Py", "Pz")],
            "axis": [_num(el.get(k)) for k in ("Ox", "Oy", "Oz")],
            "angle": _num(math.degrees(float(el.get("A"))))}


def _geometry(prop: ET.Element) -> list[dict]:
    """A sketch's elements: type, construction, ends and length (lines), centre and radius (circles, arcs)."""
    out = []
    for geo in prop.iter("Geometry"):
        kind = (geo.get("type") or "").replace("Part::Geom", "")
        flags = next((e.get("geometryModeFlags") for e in geo.iter("GeoExtension") if e.get("geometryModeFlags")), "")
        construction = len(flags) > CONSTRUCTION_BIT and flags[-1 - CONSTRUCTION_BIT] == "1"
        item: dict = {"type": "Point" if kind == "Point" else kind, "construction": construction}
        if kind == "LineSegment" and geo.find("LineSegment") is not None:
            e = geo.find("LineSegment")
            a = [_num(e.get("StartX")), _num(e.get("StartY"))]
            b = [_num(e.get("EndX")), _num(e.get("EndY"))]
            item.update(start=a, end=b, length=_num(math.dist(a, b)))
        elif kind in ("Circle", "ArcOfCircle") and geo.find(kind) is not None:
            e = geo.find(kind)
            item.update(center=[_num(e.get("CenterX")), _num(e.get("CenterY"))], radius=_num(e.get("Radius")))
        elif kind == "Point" and geo.find("GeomPoint") is not None:
            e = geo.find("GeomPoint")
            item.update(at=[_num(e.get("X")), _num(e.get("Y"))])
        out.append(item)
    return out


def read_fcstd(path: str) -> dict:
    """What a saved FreeCAD document holds: its label and its objects [{"name", "type", "label", "props",
    "placement", ...}] in FreeCAD's order, or why it cannot be read."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("Document.xml")
        if info.file_size > MAX_XML:
            return {"error": "Document.xml too large"}
        root = ET.fromstring(z.read(info))
    label = None
    for prop in root.findall("./Properties/Property"):
        if prop.get("name") == "Label":
            label = _prop_value(prop)
    objects: dict[str, dict] = {}
    for o in root.findall("./Objects/Object"):
        rec = {"name": o.get("name"), "type": o.get("type"), "label": None, "props": {}}
        if o.get("Invalid") == "1" or o.get("Error"):
            rec["error"] = o.get("Error") or "invalid"
        objects[o.get("name")] = rec
    for o in root.findall("./ObjectData/Object"):
        rec = objects.get(o.get("name"))
        if rec is None:
            continue
        for prop in o.findall("./Properties/Property"):
            name, kind = prop.get("name"), prop.get("type")
            try:
                if name == "Label":
                    rec["label"] = _prop_value(prop)
                elif name == "Placement" and prop.find("PropertyPlacement") is not None:
                    rec["placement"] = _placement(prop.find("PropertyPlacement"))
                elif name == "Proxy" and prop.find("Python") is not None and prop.find("Python").get("class"):
                    rec["proxy"] = prop.find("Python").get("class")  # Draft's kind: Rectangle, Circle, ...
                elif name == "Geometry" and kind == "Part::PropertyGeometryList":
                    rec["geometry"] = _geometry(prop)
                elif name not in SKIP and kind in PLAIN:
                    rec["props"][name] = _prop_value(prop)
            except (ValueError, TypeError):
                continue
    return {"label": label, "objects": list(objects.values())}


def read_file(path: str) -> dict | None:
    """The core's reader of the work folders' files: a FreeCAD document's objects; other files as the core
    reads them."""
    if not path.lower().endswith(".fcstd"):
        return None
    try:
        return read_fcstd(path)
    except (zipfile.BadZipFile, KeyError, ET.ParseError, OSError) as e:
        return {"error": f"not a FreeCAD document: {type(e).__name__}: {e}"}


def query(ctx) -> dict:
    """The probe's read, with the documents' objects as one collection of their own (`objects`, each by
    "<document>/<name>": FreeCAD keeps document names unique among the open ones, and object names unique in
    a document), so that each object a task makes, even in a document made on the way, is a change of its own."""
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "FreeCAD", timeout=ctx.timeout).call("state", {})
    docs = state.get("documents", [])
    objects = [{"id": f"{d['name']}/{o['name']}", "document": d["name"], **o} for d in docs for o in d.get("objects", [])]
    documents = [{k: v for k, v in d.items() if k != "objects"} for d in docs]
    return {**state, "documents": documents, "objects": objects, "read_from": "bridge"}
