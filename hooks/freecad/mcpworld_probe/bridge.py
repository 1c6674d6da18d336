"""The FreeCAD bridge's methods: what the MCP server can do, done through the objects FreeCAD's own GUI
commands use (its documents, Part Design bodies and features, sketches, Draft objects, preferences).

Each runs on FreeCAD's GUI thread (probe_runtime/bridge_server.py posts it there), so a call shows in the
GUI and fires the same observers, and the same milestones, as the same action by hand. There is
deliberately no "run Python" method: code in FreeCAD's interpreter could reach the probe.
"""

from __future__ import annotations

import math
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
PLANES = {"XY": "XY_Plane", "XZ": "XZ_Plane", "YZ": "YZ_Plane"}
AXES = {"X": "X_Axis", "Y": "Y_Axis", "Z": "Z_Axis"}
MAX_GEOMETRY = 200
HOLE_THREADS = ("M1", "M1.1", "M1.2", "M1.4", "M1.6", "M1.8", "M2", "M2.2", "M2.5", "M3", "M3.5", "M4", "M5", "M6",
                "M8", "M10", "M12", "M14", "M16", "M18", "M20", "M22", "M24", "M27", "M30", "M36", "M42", "M48",
                "M56", "M64", "M68")
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
    # as File > Save and Save As do, the saved document has no unsaved changes: the GUI document's flag is
    # read-only from Python (0.20), so File > Save itself (Std_Save) saves it once more, now to its own file
    if Gui.getDocument(doc.Name) is not None:
        _activate(doc)
        Gui.runCommand("Std_Save")
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


def _origin(body, names: dict, which: str):
    """One of the body's origin features (its XY/XZ/YZ plane, or X/Y/Z axis), by its short name."""
    key = str(which or "").upper()
    if key not in names:
        raise BridgeError(f"one of {', '.join(names)} is expected, not '{which}'")
    return next(f for f in body.Origin.OriginFeatures if f.Role == names[key])


def _numbers(value, n: int, what: str) -> list[float]:
    if not (isinstance(value, (list, tuple)) and len(value) == n
            and all(isinstance(v, (int, float)) and math.isfinite(v) for v in value)):
        raise BridgeError(f"{what} must be {n} numbers")
    return [float(v) for v in value]


def _positive(p: dict, key: str) -> float:
    v = p.get(key)
    if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise BridgeError(f"'{key}' must be a positive number (mm)")
    return float(v)


def _geometry(item: dict):
    """One sketch element from plain data: line, circle, arc (angles in degrees, counter-clockwise) or point."""
    import Part

    kind = str(item.get("type") or "").lower()
    v = lambda xy: App.Vector(*xy, 0)  # noqa: E731
    if kind == "line":
        a, b = _numbers(item.get("start"), 2, "a line's start"), _numbers(item.get("end"), 2, "a line's end")
        if a == b:
            raise BridgeError("a line's start and end are the same point")
        return Part.LineSegment(v(a), v(b))
    if kind in ("circle", "arc"):
        centre, r = _numbers(item.get("center"), 2, f"a {kind}'s center"), item.get("radius")
        if not isinstance(r, (int, float)) or r <= 0:
            raise BridgeError(f"a {kind}'s radius must be a positive number")
        circle = Part.Circle(v(centre), App.Vector(0, 0, 1), float(r))
        if kind == "circle":
            return circle
        a0, a1 = _numbers([item.get("start_angle"), item.get("end_angle")], 2, "an arc's start_angle and end_angle")
        return Part.ArcOfCircle(circle, math.radians(a0), math.radians(a1))
    if kind == "point":
        return Part.Point(v(_numbers(item.get("at"), 2, "a point's at")))
    raise BridgeError(f"a sketch element's type is line, circle, arc or point, not '{kind}'")


def add_sketch(p: dict) -> dict:
    """Part Design > Create sketch on one of the body's origin planes (optionally offset along its normal),
    with the given elements (Sketch's line, circle, arc and point tools)."""
    items = p.get("geometry") or []
    if not isinstance(items, list) or not items or len(items) > MAX_GEOMETRY:
        raise BridgeError(f"geometry is a list of 1 to {MAX_GEOMETRY} elements")
    elements = [(_geometry(item), bool(item.get("construction"))) for item in items]
    offset = p.get("offset") or 0
    if not isinstance(offset, (int, float)) or not math.isfinite(offset):
        raise BridgeError("offset is a distance (mm) along the plane's normal")
    doc = _doc(p)
    body = _body(doc, p.get("body"))
    plane = _origin(body, PLANES, p.get("plane") or "XY")
    sketch = body.newObject("Sketcher::SketchObject", "Sketch")
    sketch.Support = (plane, [""])
    sketch.MapMode = "FlatFace"
    sketch.AttachmentOffset = App.Placement(App.Vector(0, 0, float(offset)), App.Rotation())
    for geo, construction in elements:
        sketch.addGeometry(geo, construction)
    doc.recompute()
    return {"document": doc.Name, "body": body.Name, "object": sketch.Name, **fc_state.read_object(sketch)}


def add_pattern(p: dict) -> dict:
    """Part Design > Apply a pattern: Mirrored (about an origin plane), LinearPattern (along an origin axis)
    or PolarPattern (about one) of a feature of the body (default: its tip), then recompute."""
    kind = str(p.get("kind") or "")
    if kind not in ("Mirrored", "LinearPattern", "PolarPattern"):
        raise BridgeError("kind must be Mirrored, LinearPattern or PolarPattern")
    doc = _doc(p)
    body = _body(doc, p.get("body"))
    original = _obj(doc, str(p["feature"])) if p.get("feature") else body.Tip
    if original is None or original.getParentGeoFeatureGroup() != body:
        raise BridgeError(f"the feature to pattern must be one of body {body.Name}'s")
    if kind == "Mirrored":
        ref = (_origin(body, PLANES, p.get("plane") or "XY"), [""])
    else:
        ref = (_origin(body, AXES, p.get("axis") or "Z"), [""])
        occurrences = p.get("occurrences")
        if not isinstance(occurrences, int) or not 2 <= occurrences <= 1000:
            raise BridgeError("occurrences must be a whole number from 2 to 1000")
    feature = body.newObject(f"PartDesign::{kind}", kind)
    feature.Originals = [original]
    if kind == "Mirrored":
        feature.MirrorPlane = ref
    elif kind == "LinearPattern":
        feature.Direction = ref
        feature.Length = _positive(p, "length")
        feature.Occurrences = occurrences
    else:
        feature.Axis = ref
        angle = p.get("angle", 360)
        if not isinstance(angle, (int, float)) or not 0 < angle <= 360:
            raise BridgeError("angle (degrees) must be above 0 and at most 360")
        feature.Angle = float(angle)
        feature.Occurrences = occurrences
    body.Tip = feature
    doc.recompute()
    if not feature.isValid():
        raise BridgeError(f"FreeCAD could not compute {feature.Name}: {feature.getStatusString()}")
    return {"document": doc.Name, "body": body.Name, "object": feature.Name, **fc_state.read_object(feature)}


def add_hole(p: dict) -> dict:
    """Part Design > Create a hole feature: a sketch with a circle at `center` on the body's XY plane offset
    to the solid's top face, then a Hole (ISO metric thread of `size`, `depth` deep, `threaded`, and with
    `model_thread` the thread modelled), drilled down into the solid."""
    size = str(p.get("size") or "")
    if size not in HOLE_THREADS:
        raise BridgeError(f"size is an ISO metric regular thread size: {', '.join(HOLE_THREADS)}")
    depth = _positive(p, "depth")
    centre = _numbers(p.get("center") or [0, 0], 2, "center")
    doc = _doc(p)
    body = _body(doc, p.get("body"))
    base = body.Tip
    if base is None or base.Shape.isNull() or not base.Shape.Solids:
        raise BridgeError("a hole needs a solid in the body")
    top = base.Shape.BoundBox.ZMax
    sketch = add_sketch({"document": doc.Name, "body": body.Name, "plane": "XY", "offset": top,
                         "geometry": [{"type": "circle", "center": centre, "radius": 1.0}]})["object"]
    hole = body.newObject("PartDesign::Hole", "Hole")
    hole.Profile = doc.getObject(sketch)
    hole.ThreadType = "ISOMetricProfile"
    hole.ThreadSize = size
    hole.Threaded = bool(p.get("threaded", True))
    hole.ModelThread = bool(p.get("model_thread", False))
    hole.DepthType = "Dimension"
    hole.Depth = depth
    doc.getObject(sketch).Visibility = False
    body.Tip = hole
    doc.recompute()
    if not hole.isValid():
        raise BridgeError(f"FreeCAD could not compute {hole.Name}: {hole.getStatusString()}")
    return {"document": doc.Name, "body": body.Name, "object": hole.Name, "sketch": sketch,
            **fc_state.read_object(hole)}


def add_draft(p: dict) -> dict:
    """Draft workbench shapes in the XY plane: a Rectangle (from its lower-left corner `at`, `length` along x,
    `height` along y), a Circle (about `center`) or a regular Polygon (`sides`, circumscribed `radius`), each
    a face as the Draft tools make by default."""
    import Draft

    kind = str(p.get("kind") or "")
    doc = _doc(p)
    if kind == "Rectangle":
        at = _numbers(p.get("at") or [0, 0], 2, "at")
        obj = Draft.make_rectangle(_positive(p, "length"), _positive(p, "height"),
                                   placement=App.Placement(App.Vector(*at, 0), App.Rotation()), face=True)
    elif kind in ("Circle", "Polygon"):
        centre = _numbers(p.get("center") or [0, 0], 2, "center")
        placement = App.Placement(App.Vector(*centre, 0), App.Rotation())
        if kind == "Circle":
            obj = Draft.make_circle(_positive(p, "radius"), placement=placement, face=True)
        else:
            sides = p.get("sides")
            if not isinstance(sides, int) or not 3 <= sides <= 100:
                raise BridgeError("sides must be a whole number from 3 to 100")
            obj = Draft.make_polygon(sides, radius=_positive(p, "radius"), inscribed=True, placement=placement,
                                     face=True)
    else:
        raise BridgeError("kind must be Rectangle, Circle or Polygon")
    doc.recompute()
    return {"document": doc.Name, "object": obj.Name, **fc_state.read_object(obj)}


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
    body = obj.getParentGeoFeatureGroup() if hasattr(obj, "getParentGeoFeatureGroup") else None
    if body is not None and body.TypeId == "PartDesign::Body" and obj in body.Group:
        # as Edit > Delete does (the feature's view provider): the body takes it out first, which moves its
        # tip back to the feature before and links the next feature to that one
        body.removeObject(obj)
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
    "add_sketch": add_sketch,
    "add_pattern": add_pattern,
    "add_hole": add_hole,
    "add_draft": add_draft,
    "set_properties": set_properties,
    "delete_object": delete_object,
    "activate_workbench": activate_workbench,
    "set_preference": set_preference,
}

