"""FreeCAD's state as plain data, and the differences between two reads (the probe's events).

A read: every open document (its file, label, whether it has unsaved changes, and every object: type,
label, its plain properties, placement, shape volume, a sketch's geometry, a Draft object's kind), the
active document, the active workbench, the object in edit mode, and the preferences the tasks change
(user edit mode, unit schema, language). Values are rounded so that float noise is not a change.
"""

from __future__ import annotations

import FreeCAD as App
import FreeCADGui as Gui

# property types kept in a read (numbers, text, choices, links by name); the rest (shapes, lists of
# points, expressions) are summarised elsewhere or left out
PLAIN = {"App::PropertyLength", "App::PropertyDistance", "App::PropertyFloat", "App::PropertyAngle",
         "App::PropertyInteger", "App::PropertyIntegerConstraint", "App::PropertyFloatConstraint",
         "App::PropertyBool", "App::PropertyEnumeration", "App::PropertyString", "App::PropertyQuantity",
         "App::PropertyQuantityConstraint", "App::PropertyPercent", "App::PropertyLink",
         "App::PropertyPrecision", "App::PropertyAcceleration", "App::PropertyLinkSub",
         "App::PropertyLinkSubList", "App::PropertyLinkList", "App::PropertyLinkSubListHidden"}
SKIP = {"Label", "Label2", "Visibility", "ExpressionEngine", "Placement", "Shape", "_Body", "Group",
        "Origin", "Tip", "BaseFeature", "AddSubShape", "SuppressedShape", "Support", "MapMode"}
PARAMS = {  # name -> (parameter group, key, kind)
    "user_edit_mode": ("User parameter:BaseApp/Preferences/General", "UserEditMode", "int"),
    "unit_schema": ("User parameter:BaseApp/Preferences/Units", "UserSchema", "int"),
    "language": ("User parameter:BaseApp/Preferences/General", "Language", "str"),
}


def _num(v):
    return round(float(v), 6)


def _value(v):
    if isinstance(v, App.Units.Quantity):
        return _num(v.Value)
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, App.DocumentObject):
        return v.Name
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], App.DocumentObject):  # a link to sub-elements
        return [v[0].Name, sorted(v[1]) if isinstance(v[1], (list, tuple)) else v[1]]
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    return str(v)


def _placement(p) -> dict:
    axis, angle = p.Rotation.Axis, p.Rotation.Angle
    return {"position": [_num(p.Base.x), _num(p.Base.y), _num(p.Base.z)],
            "axis": [_num(axis.x), _num(axis.y), _num(axis.z)], "angle": _num(angle * 180.0 / 3.141592653589793)}


def _geometry(sketch) -> list[dict]:
    out = []
    for i, g in enumerate(sketch.Geometry):
        kind = type(g).__name__
        # the sketch knows which of its elements are construction geometry (the element itself may not say)
        construction = sketch.getConstruction(i) if hasattr(sketch, "getConstruction") else getattr(g, "Construction", False)
        item = {"type": kind, "construction": bool(construction)}
        if kind == "LineSegment":
            a, b = g.StartPoint, g.EndPoint
            item.update(start=[_num(a.x), _num(a.y)], end=[_num(b.x), _num(b.y)], length=_num((b - a).Length))
        elif kind in ("Circle", "ArcOfCircle"):
            item.update(center=[_num(g.Center.x), _num(g.Center.y)], radius=_num(g.Radius))
        elif kind == "Point":
            item.update(at=[_num(g.X), _num(g.Y)])
        out.append(item)
    return out


def _wires(sketch) -> list[dict]:
    """The sketch's wires: edges, and whether closed with the area it encloses (a regular polygon is the
    equal-sided one of the largest area; a rounded rectangle is pinned by its area and perimeter)."""
    import Part

    out = []
    for wire in sketch.Shape.Wires:
        item = {"edges": len(wire.Edges), "closed": wire.isClosed(), "length": round(wire.Length, 3)}
        if item["closed"]:
            try:
                item["area"] = round(Part.Face(wire).Area, 3)
            except Exception:
                pass
        out.append(item)
    return out


def _hole_centers(hole) -> list[list[float]]:
    """Where a hole is drilled: its profile sketch's circle centres, in the document's coordinates."""
    profile = hole.Profile[0] if isinstance(hole.Profile, tuple) else hole.Profile
    if profile is None or not hasattr(profile, "Geometry"):
        return []
    place = profile.getGlobalPlacement() if hasattr(profile, "getGlobalPlacement") else profile.Placement
    out = []
    for i, g in enumerate(profile.Geometry):
        if type(g).__name__ == "Circle" and not profile.getConstruction(i):
            c = place.multVec(g.Center)
            out.append([_num(c.x), _num(c.y), _num(c.z)])
    return out


def read_object(obj) -> dict:
    rec: dict = {"type": obj.TypeId, "label": obj.Label, "props": {}}
    for name in obj.PropertiesList:
        if name in SKIP:
            continue
        try:
            if obj.getTypeIdOfProperty(name) not in PLAIN:
                continue
            rec["props"][name] = _value(getattr(obj, name))
        except Exception:
            continue
    if hasattr(obj, "Placement"):
        rec["placement"] = _placement(obj.Placement)
    proxy = getattr(obj, "Proxy", None)
    if proxy is not None and getattr(proxy, "Type", None):
        rec["proxy"] = str(proxy.Type)  # Draft's kind: Rectangle, Circle, Polygon, ...
    shape = getattr(obj, "Shape", None)
    if shape is not None:
        try:
            if not shape.isNull():
                rec["volume"] = round(shape.Volume, 3)
                rec["solids"] = len(shape.Solids)
                rec["edges"] = len(shape.Edges)
                if not shape.Solids:
                    box = shape.BoundBox  # where a flat shape sits: its bounds and their centre
                    rec["center"] = [_num(box.Center.x), _num(box.Center.y), _num(box.Center.z)]
                    rec["bounds"] = [_num(v) for v in (box.XMin, box.YMin, box.ZMin, box.XMax, box.YMax, box.ZMax)]
                    rec["length"] = round(shape.Length, 3)
                    if shape.Faces:
                        rec["area"] = round(shape.Area, 3)
        except Exception:
            pass
    if obj.TypeId == "Sketcher::SketchObject":
        rec["geometry"] = _geometry(obj)
        rec["constraints"] = len(obj.Constraints)
        rec["wires"] = _wires(obj)
    if obj.TypeId == "PartDesign::Hole":
        rec["centers"] = _hole_centers(obj)
    if obj.TypeId.startswith("PartDesign::") and hasattr(obj, "getParentGeoFeatureGroup"):
        body = obj.getParentGeoFeatureGroup()
        if body is not None:
            rec["body"] = body.Name
    rec["state"] = sorted(str(s) for s in obj.State if s != "Touched")
    return rec


def _modified(doc) -> bool | None:
    """Whether the document has changes not yet saved (the title bar's asterisk; None without a GUI)."""
    try:
        return bool(Gui.getDocument(doc.Name).Modified)
    except Exception:
        return None


def read_document(doc) -> dict:
    return {"name": doc.Name, "file": doc.FileName, "label": doc.Label, "modified": _modified(doc),
            "objects": [{"name": o.Name, **read_object(o)} for o in doc.Objects]}


def read() -> dict:
    params = {}
    for name, (group, key, kind) in PARAMS.items():
        g = App.ParamGet(group)
        params[name] = g.GetInt(key, 0) if kind == "int" else g.GetString(key, "")
    editing = None
    gui_doc = Gui.ActiveDocument
    if gui_doc is not None:
        vp = gui_doc.getInEdit()
        if vp is not None:
            editing = {"document": gui_doc.Document.Name, "object": vp.Object.Name, "type": vp.Object.TypeId}
    bench = Gui.activeWorkbench()
    return {"documents": [read_document(doc) for doc in App.listDocuments().values()],
            "active_document": App.ActiveDocument.Name if App.ActiveDocument else None,
            "workbench": type(bench).__name__ if bench is not None else None,
            "editing": editing, "params": params}


def _flat(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k != "name"}


def _by_name(items: list[dict]) -> dict[str, dict]:
    return {item["name"]: item for item in items}


def diff(old: dict, new: dict):
    """(event, payload) pairs that turn `old` into `new`."""
    old_docs, new_docs = _by_name(old["documents"]), _by_name(new["documents"])
    if old["workbench"] != new["workbench"] and new["workbench"]:
        yield "workbench_changed", {"workbench": new["workbench"], "old_workbench": old["workbench"]}
    for name, value in new["params"].items():
        if old["params"].get(name) != value:
            yield "parameter_changed", {"name": name, "value": value, "old_value": old["params"].get(name)}
    if old["editing"] != new["editing"]:
        if old["editing"]:
            yield "edit_finished", dict(old["editing"])
        if new["editing"]:
            yield "edit_started", dict(new["editing"])
    for name, doc in new_docs.items():
        before = old_docs.get(name)
        objects = _by_name(doc["objects"])
        if before is None:
            if doc["file"]:
                yield "document_opened", {"document": name, "label": doc["label"], "path": doc["file"],
                                          "objects": {k: o["type"] for k, o in objects.items()}}
            else:
                yield "document_created", {"document": name, "label": doc["label"]}
            before = {"objects": [] if not doc["file"] else doc["objects"]}
        before_objects = _by_name(before["objects"])
        for oname, obj in objects.items():
            was = before_objects.get(oname)
            if was is None:
                yield "object_added", {"document": name, "object": oname, **_flat(obj)}
            elif was != obj:
                changed = {k: [was["props"].get(k), v] for k, v in obj["props"].items() if was["props"].get(k) != v}
                for key in ("placement", "volume", "geometry", "label", "solids", "length", "area", "center", "bounds",
                            "wires", "centers"):
                    if was.get(key) != obj.get(key):
                        changed[key] = [was.get(key), obj.get(key)]
                if changed:
                    yield "object_changed", {"document": name, "object": oname, "changed": changed, **_flat(obj)}
        for oname, obj in before_objects.items():
            if oname not in objects:
                yield "object_removed", {"document": name, "object": oname, "type": obj["type"], "label": obj["label"]}
    for name, doc in old_docs.items():
        if name not in new_docs:
            yield "document_closed", {"document": name, "path": doc["file"]}
