"""The FreeCAD bridge's methods: what the MCP server can do, done through the objects FreeCAD's own GUI
commands use (its documents, Part Design bodies and features, sketches, Draft objects, preferences).

Each runs on FreeCAD's GUI thread (probe_runtime/bridge_server.py posts it there), so a call shows in the
GUI and fires the same observers, and the same milestones, as the same action by hand. There is
deliberately no "run Python" method: code in FreeCAD's interpreter could reach the probe.
"""

from __future__ import annotations

import os

import FreeCAD as App
import FreeCADGui as Gui

from . import state as fc_state
from .probe_bridge_server import BridgeError

# Part Design primitives: kind -> the properties a caller may set (FreeCAD's own names)
PRIMITIVES = {
    "Box": ("Length", "Width", "Height"),
    "Cylinder": ("Radius", "Height", "Angle"),
    "Sphere": ("Radius", "Angle1", "Angle2", "Angle3"),
    "Cone": ("Radius1", "Radius2", "Height", "Angle"),
    "Ellipsoid": ("Radius1", "Radius2", "Radius3", "Angle1", "Angle2", "Angle3"),
    "Torus": ("Radius1", "Radius2", "Angle1", "Angle2", "Angle3"),
    "Prism": ("Polygon", "Circumradius", "Height", "FirstAngle", "SecondAngle"),
    "Wedge": ("Xmin", "Ymin", "Zmin", "X2min", "Z2min", "Xmax", "Ymax", "Zmax", "X2max", "Z2max"),
}
WORKBENCHES = ("PartDesignWorkbench", "PartWorkbench", "SketcherWorkbench", "DraftWorkbench", "StartWorkbench")


def _doc(p: dict, key: str = "document"):
    name = p.get(key)
    if name:
        doc = App.listDocuments().get(name) or next(
            (d for d in App.listDocuments().values() if d.Label == name), None)
        if doc is None:
            raise BridgeError(f"no open document named '{name}' (open: {', '.join(App.listDocuments()) or 'none'})")
        return doc
    if App.ActiveDocument is None:
        raise BridgeError("no document is open: create one (new_document) or open one first")
    return App.ActiveDocument


def _obj(doc, name: str):
    obj = doc.getObject(name) or next(iter(doc.getObjectsByLabel(name)), None)
    if obj is None:
        raise BridgeError(f"no object '{name}' in document '{doc.Name}' "
                          f"(objects: {', '.join(o.Name for o in doc.Objects) or 'none'})")
    return obj


def _path(p: dict, key: str = "path", must_exist: bool = True) -> str:
    if not p.get(key):
        raise BridgeError(f"'{key}' is required")
    path = os.path.abspath(os.path.expanduser(str(p[key])))
    if must_exist and not os.path.exists(path):
        raise BridgeError(f"no such file: {path}")
    if not must_exist and not os.path.isdir(os.path.dirname(path)):
        raise BridgeError(f"no such folder: {os.path.dirname(path)}")
    return path


def _placement(p: dict):
    pos = p.get("position") or [0, 0, 0]
    axis = p.get("axis") or [0, 0, 1]
    return App.Placement(App.Vector(*map(float, pos)), App.Rotation(App.Vector(*map(float, axis)),
                                                                     float(p.get("angle") or 0)))


def _activate(doc) -> None:
    App.setActiveDocument(doc.Name)
    if Gui.getDocument(doc.Name) is not None:
        Gui.ActiveDocument = Gui.getDocument(doc.Name)


def _summary(doc) -> dict:
    return {"document": doc.Name, "label": doc.Label, "path": doc.FileName,
            "objects": {o.Name: {"type": o.TypeId, "label": o.Label} for o in doc.Objects}}


def get_state(p: dict) -> dict:
    return fc_state.read()


def new_document(p: dict) -> dict:
    doc = App.newDocument(str(p["name"])) if p.get("name") else App.newDocument()
    _activate(doc)
    return _summary(doc)


def open_document(p: dict) -> dict:
    path = _path(p)
    for doc in App.listDocuments().values():
        if doc.FileName and os.path.samefile(doc.FileName, path):
            _activate(doc)
            return _summary(doc)
    doc = App.openDocument(path)
    _activate(doc)
    return _summary(doc)


def save_document(p: dict) -> dict:
    doc = _doc(p)
    if p.get("path"):
        path = _path(p, must_exist=False)
        if not path.lower().endswith(".fcstd"):
            raise BridgeError("a FreeCAD document is saved as a .FCStd file")
        doc.saveAs(path)
    elif doc.FileName:
        doc.save()
    else:
        raise BridgeError(f"document '{doc.Name}' has never been saved: give a path")
    return _summary(doc)


def close_document(p: dict) -> dict:
    doc = _doc(p)
    name, path = doc.Name, doc.FileName
    App.closeDocument(name)
    return {"closed": name, "path": path}


def list_documents(p: dict) -> dict:
    return {"documents": [_summary(d) for d in App.listDocuments().values()],
            "active": App.ActiveDocument.Name if App.ActiveDocument else None}


def get_object(p: dict) -> dict:
    doc = _doc(p)
    obj = _obj(doc, str(p.get("name") or ""))
    return {"document": doc.Name, "object": obj.Name, **fc_state.read_object(obj)}


def _body(doc, name: str | None):
    if name:
        body = _obj(doc, name)
        if body.TypeId != "PartDesign::Body":
            raise BridgeError(f"'{name}' is a {body.TypeId}, not a Part Design body")
        return body
    bodies = [o for o in doc.Objects if o.TypeId == "PartDesign::Body"]
    if len(bodies) > 1:
        raise BridgeError(f"document '{doc.Name}' has several bodies ({', '.join(b.Name for b in bodies)}): name one")
    return bodies[0] if bodies else create_body_in(doc)


def create_body_in(doc):
    body = doc.addObject("PartDesign::Body", "Body")
    if Gui.ActiveDocument is not None and Gui.ActiveDocument.Document is doc:
        Gui.ActiveDocument.ActiveView.setActiveObject("pdbody", body)
    return body


def create_body(p: dict) -> dict:
    doc = _doc(p)
    body = create_body_in(doc)
    doc.recompute()
    return {"document": doc.Name, "object": body.Name, "label": body.Label}


def add_primitive(p: dict) -> dict:
    kind = str(p.get("kind") or "").capitalize()
    if kind not in PRIMITIVES:
        raise BridgeError(f"kind must be one of {', '.join(PRIMITIVES)}")
    op = str(p.get("operation") or "additive").lower()
    if op not in ("additive", "subtractive"):
        raise BridgeError("operation must be 'additive' or 'subtractive'")
    props = dict(p.get("properties") or {})
    unknown = sorted(set(props) - set(PRIMITIVES[kind]))
    if unknown:
        raise BridgeError(f"{kind} has no {', '.join(unknown)} (it has {', '.join(PRIMITIVES[kind])})")
    doc = _doc(p)
    body = _body(doc, p.get("body"))
    if op == "subtractive" and body.Tip is None:
        raise BridgeError("a subtractive feature needs a solid in the body to cut from")
    feature = body.newObject(f"PartDesign::{op.capitalize()}{kind}", f"{op.capitalize()}{kind}")
    for name, value in props.items():
        setattr(feature, name, int(value) if name == "Polygon" else float(value))
    if p.get("placement"):
        feature.Placement = _placement(p["placement"])
    doc.recompute()
    if not feature.isValid():
        raise BridgeError(f"FreeCAD could not compute {feature.Name}: {feature.getStatusString()}")
    return {"document": doc.Name, "body": body.Name, "object": feature.Name, **fc_state.read_object(feature)}


def add_dressup(p: dict) -> dict:
    """Part Design > Apply a dress-up feature > Fillet / Chamfer on the body's tip: on the named edges, or
    on every edge (the panel's "Use All Edges")."""
    kind = str(p.get("kind") or "").capitalize()
    if kind not in ("Fillet", "Chamfer"):
        raise BridgeError("kind must be Fillet or Chamfer")
    size = p.get("size")
    if not isinstance(size, (int, float)) or size <= 0:
        raise BridgeError("size (the fillet's radius or the chamfer's size, mm) must be a positive number")
    doc = _doc(p)
    body = _body(doc, p.get("body"))
    base = body.Tip
    if base is None or base.Shape.isNull() or not base.Shape.Solids:
        raise BridgeError("a dress-up feature needs a solid in the body")
    edges = p.get("edges") or "all"
    count = len(base.Shape.Edges)
    if edges != "all":
        bad = [e for e in edges if not (isinstance(e, str) and e.startswith("Edge") and e[4:].isdigit()
                                        and 1 <= int(e[4:]) <= count)]
        if bad or not edges:
            raise BridgeError(f"edges is 'all' or a list of Edge1..Edge{count} of {base.Name} (bad: {bad})")
    feature = body.newObject(f"PartDesign::{kind}", kind)
    feature.Base = (base, ["Edge1"] if edges == "all" else list(edges))
    feature.UseAllEdges = edges == "all"
    setattr(feature, "Radius" if kind == "Fillet" else "Size", float(size))
    doc.recompute()
    if not feature.isValid():
        raise BridgeError(f"FreeCAD could not compute {feature.Name}: {feature.getStatusString()}")
    return {"document": doc.Name, "body": body.Name, "object": feature.Name, **fc_state.read_object(feature)}


def set_properties(p: dict) -> dict:
    doc = _doc(p)
    obj = _obj(doc, str(p.get("name") or ""))
    props = dict(p.get("properties") or {})
    for name, value in props.items():
        if name not in obj.PropertiesList:
            raise BridgeError(f"{obj.Name} ({obj.TypeId}) has no property '{name}'")
        try:
            setattr(obj, name, value)
        except Exception as e:
            raise BridgeError(f"{obj.Name}.{name} = {value!r}: {e}") from None
    if p.get("placement"):
        obj.Placement = _placement(p["placement"])
    doc.recompute()
    return {"document": doc.Name, "object": obj.Name, **fc_state.read_object(obj)}


def delete_object(p: dict) -> dict:
    doc = _doc(p)
    obj = _obj(doc, str(p.get("name") or ""))
    name = obj.Name
    doc.removeObject(name)
    doc.recompute()
    return {"document": doc.Name, "removed": name}


def activate_workbench(p: dict) -> dict:
    name = str(p.get("name") or "")
    if name not in WORKBENCHES:
        raise BridgeError(f"workbench must be one of {', '.join(WORKBENCHES)}")
    Gui.activateWorkbench(name)
    return {"workbench": name}


def set_preference(p: dict) -> dict:
    """The preferences the GUI's Edit > Preferences (and its edit mode menu) change, set the same way."""
    name, value = str(p.get("name") or ""), p.get("value")
    if name not in fc_state.PARAMS:
        raise BridgeError(f"name must be one of {', '.join(fc_state.PARAMS)}")
    group, key, kind = fc_state.PARAMS[name]
    if name == "user_edit_mode":
        modes = Gui.listUserEditModes()
        index = modes.index(value) if value in modes else value
        if not isinstance(index, int) or not 0 <= index < len(modes):
            raise BridgeError(f"user_edit_mode is one of {', '.join(modes)} (or its index)")
        # Edit > Edit mode's own command: it stores the mode (UserEditMode) and switches to it
        Gui.runCommand("Std_UserEditMode", index)
        stored = App.ParamGet(group).GetInt(key, 0)
        if stored != index:
            raise BridgeError(f"FreeCAD kept edit mode {modes[stored]} (asked for {modes[index]})")
        return {"name": name, "value": stored, "mode": modes[index]}
    if name == "unit_schema":
        schemas = App.Units.listSchemas()
        if not isinstance(value, int) or not 0 <= value < len(schemas):
            raise BridgeError(f"unit_schema is an index: {', '.join(f'{i} {s}' for i, s in enumerate(schemas))}")
        App.ParamGet(group).SetInt(key, value)
        App.Units.setSchema(value)
        return {"name": name, "value": value, "schema": schemas[value]}
    languages = Gui.supportedLocales()
    if value not in languages:
        raise BridgeError(f"language is one of FreeCAD's: {', '.join(sorted(languages))}")
    App.ParamGet(group).SetString(key, str(value))
    Gui.setLocale(str(value))
    return {"name": name, "value": value}


METHODS = {
    "state": get_state,
    "new_document": new_document,
    "open_document": open_document,
    "save_document": save_document,
    "close_document": close_document,
    "list_documents": list_documents,
    "get_object": get_object,
    "create_body": create_body,
    "add_primitive": add_primitive,
    "add_dressup": add_dressup,
    "set_properties": set_properties,
    "delete_object": delete_object,
    "activate_workbench": activate_workbench,
    "set_preference": set_preference,
}

