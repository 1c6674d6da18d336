"""Blender's state as plain data, and the milestones between two reads.

`read()` takes what the tasks are about from the running Blender: the open file, the windows, each 3D
view (shading, named view, local view), the mode, and every object (transform, mesh geometry, text
body, metaball elements, materials, modifiers). `diff(old, new)` turns two reads into events. Floats
are rounded to 4 places, so a typed value (2.5, -2) matches exactly. Runs on Blender's main thread.
"""

from __future__ import annotations

import hashlib
import math
import os

import bmesh
import bpy
from mathutils import Vector

COORDS_MAX = 64     # a mesh this small lists its vertices (tasks that move one name it)
CENTER_MAX = 20000  # surface centres are computed up to this many faces

# default primitives by (vertices, faces): what `primitive` says of a new mesh object
PRIMITIVES = {(8, 6): "Cube", (4, 1): "Plane", (32, 0): "Circle", (482, 512): "UV Sphere", (42, 80): "Ico Sphere",
              (64, 34): "Cylinder", (33, 33): "Cone", (576, 576): "Torus", (100, 81): "Grid", (507, 500): "Monkey"}
# named views by the 3D view's rotation quaternion (w, x, y, z)
_H = math.sqrt(0.5)
VIEWS = {"TOP": (1, 0, 0, 0), "BOTTOM": (0, 1, 0, 0), "FRONT": (_H, _H, 0, 0), "BACK": (0, 0, _H, _H),
         "RIGHT": (0.5, 0.5, 0.5, 0.5), "LEFT": (0.5, 0.5, -0.5, -0.5)}


def num(v) -> float:
    return round(float(v), 4) + 0.0  # + 0.0: no -0.0


def vec(v) -> list[float]:
    return [num(x) for x in v]


def named_view(q) -> str:
    for name, ref in VIEWS.items():
        if abs(abs(sum(a * b for a, b in zip(q, ref))) - 1.0) < 1e-4:
            return name
    return "USER"


def _mesh(obj) -> dict:
    me = obj.data
    selected = None
    if obj.mode == "EDIT":
        bm = bmesh.from_edit_mesh(me)
        co = [tuple(v.co) for v in bm.verts]
        selected = [tuple(v.co) for v in bm.verts if v.select]
        faces = [[tuple(v.co) for v in f.verts] for f in bm.faces] if len(bm.faces) <= CENTER_MAX else None
        nfaces = len(bm.faces)
    else:
        co = [tuple(v.co) for v in me.vertices]
        faces = [[co[i] for i in p.vertices] for p in me.polygons] if len(me.polygons) <= CENTER_MAX else None
        nfaces = len(me.polygons)
    mw = _world_matrix(obj)
    world = [tuple(mw @ Vector(c)) for c in co]
    out = {"vertices": len(co), "faces": nfaces, "evaluated_vertices": _evaluated_vertices(obj, len(co)),
           "digest": _digest(co), "world_digest": _digest(world, 3)}
    if len(co) <= COORDS_MAX:
        out["coords"] = [vec(c) for c in co]
    if selected is not None:  # Edit Mode's selection: the vertices of a small mesh, else how many
        out["selected"] = sorted(vec(c) for c in selected) if len(co) <= COORDS_MAX else len(selected)
    if faces:
        out["surface_center"] = vec(_surface_center(mw, faces))
    return out


def _world_matrix(obj):
    """Object to world, from the object's own location, rotation and scale: `matrix_world` lags until the
    depsgraph has run, so a read between a move and that update would see the geometry unmoved."""
    if obj.parent is None:
        return obj.matrix_basis.copy()
    return obj.parent.matrix_world @ obj.matrix_parent_inverse @ obj.matrix_basis


def _evaluated_vertices(obj, own: int) -> int:
    """Vertices after the modifier stack (what the view shows): the same whether a modifier is still in
    the stack or was applied. The depsgraph has it already for drawing; reading the count is cheap."""
    if not obj.modifiers:
        return own
    try:
        return len(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices)
    except (RuntimeError, AttributeError, ReferenceError):
        return own


def _digest(coords, places: int = 4) -> str:
    h = hashlib.sha1()
    for c in coords:
        h.update(("%.*f,%.*f,%.*f;" % (places, c[0] + 0.0, places, c[1] + 0.0, places, c[2] + 0.0)).encode())
    return h.hexdigest()[:16]


def _surface_center(mw, faces) -> tuple:
    """The area-weighted centre of the faces in world space (Blender's "Center of Mass (Surface)")."""
    total, acc = 0.0, Vector((0.0, 0.0, 0.0))
    for f in faces:
        pts = [mw @ Vector(p) for p in f]
        for i in range(1, len(pts) - 1):  # fan triangulation
            a, b, c = pts[0], pts[i], pts[i + 1]
            area = (b - a).cross(c - a).length / 2
            total += area
            acc += area * (a + b + c) / 3
    return tuple(acc / total) if total > 0 else tuple(mw.translation)


def _object(obj, local_view: set[str]) -> dict:
    d = {"name": obj.name, "type": obj.type, "data": obj.data.name if obj.data else None,
         "location": vec(obj.location), "rotation": vec(obj.rotation_euler), "scale": vec(obj.scale),
         "dimensions": vec(obj.dimensions), "parent": obj.parent.name if obj.parent else None,
         "mode": obj.mode, "pointer": obj.as_pointer(), "local_view": obj.name in local_view,
         "materials": [s.material.name for s in obj.material_slots if s.material],
         "modifiers": [{"name": m.name, "type": m.type} for m in obj.modifiers]}
    if obj.type == "MESH":
        d["mesh"] = _mesh(obj)
        d["primitive"] = PRIMITIVES.get((d["mesh"]["vertices"], d["mesh"]["faces"]))
        d["origin_at_surface_center"] = ("surface_center" in d["mesh"] and
                                         max(abs(a - b) for a, b in zip(d["mesh"]["surface_center"], vec(_world_matrix(obj).translation))) < 1e-3)
    elif obj.type == "FONT":
        d["body"] = obj.data.body
    elif obj.type == "META":
        d["elements"] = [{"type": e.type, "co": vec(e.co), "radius": num(e.radius),
                          "size": [num(e.size_x), num(e.size_y), num(e.size_z)]} for e in obj.data.elements]
    return d


def _views(wm) -> tuple[list[dict], set[str]]:
    views, local = [], set()
    for wi, win in enumerate(wm.windows):
        for area in win.screen.areas:
            if area.type != "VIEW_3D":
                continue
            space = area.spaces.active
            rv3d = space.region_3d
            views.append({"window": wi, "shading": space.shading.type, "local_view": space.local_view is not None,
                          "view": named_view(rv3d.view_rotation), "perspective": rv3d.view_perspective})
            if space.local_view is not None:
                # the local-view bits are set on the evaluated objects only (the originals always say False)
                depsgraph = bpy.context.evaluated_depsgraph_get()
                for obj in win.view_layer.objects:
                    if obj.evaluated_get(depsgraph).local_view_get(space):
                        local.add(obj.name)
    return views, local


def _flush_text_edits(view_layer) -> None:
    """A text object's `body` follows edit-mode typing only when edit mode is left; loading the edit
    buffer into it makes the typing readable now. It tags the object for a depsgraph update, so a read
    that follows only that update must not flush again (it would loop)."""
    for obj in view_layer.objects:
        if obj.type == "FONT" and obj.mode == "EDIT":
            obj.update_from_editmode()


def read(flush_text: bool = True) -> dict:
    wm = bpy.data.window_managers[0]
    win = wm.windows[0] if wm.windows else None
    view_layer = win.view_layer if win else bpy.context.view_layer
    if flush_text:
        _flush_text_edits(view_layer)
    views, local = _views(wm)
    active = view_layer.objects.active
    objects = [_object(o, local) for o in view_layer.objects]
    path = bpy.data.filepath
    return {"file": {"path": path, "on_disk": bool(path) and os.path.isfile(path)}, "unsaved": bpy.data.is_dirty,
            # main windows: a file browser or the preferences open as temporary windows
            "windows": sum(1 for w in wm.windows if not w.screen.is_temporary), "views": views,
            "mode": active.mode if active else "OBJECT", "active": active.name if active else None,
            "selected": sorted(o.name for o in view_layer.objects if o.select_get(view_layer=view_layer)),
            # the same by pointer: a rename is no change of the selection
            "selection": (sorted(o.as_pointer() for o in view_layer.objects if o.select_get(view_layer=view_layer)),
                          active.as_pointer() if active else None),
            "objects": sorted(objects, key=lambda o: o["name"]),
            "materials": sorted(m.name for m in bpy.data.materials)}


def public(state: dict) -> dict:
    """The state as the state query gives it: without what only the diff needs."""
    def obj(o):
        o = {k: v for k, v in o.items() if k != "pointer"}
        if "mesh" in o:
            o["mesh"] = {k: v for k, v in o["mesh"].items() if k != "world_digest"}
        return o
    return {**{k: v for k, v in state.items() if k != "selection"}, "objects": [obj(o) for o in state["objects"]]}


# -- the events between two reads -----------------------------------------------------------------
def _brief(o: dict) -> dict:
    b = {k: o[k] for k in ("name", "type", "data", "location", "rotation", "scale", "dimensions") if k in o}
    for k in ("primitive", "body", "elements"):
        if k in o:
            b[k] = o[k]
    if "mesh" in o:
        b["vertices"], b["faces"] = o["mesh"]["vertices"], o["mesh"]["faces"]
    return b


def diff(old: dict, new: dict):
    """(event name, payload) for each change from `old` to `new`."""
    if old["windows"] != new["windows"]:
        yield ("window_opened" if new["windows"] > old["windows"] else "window_closed"), \
            {"windows": new["windows"], "old_windows": old["windows"]}
    for i, v in enumerate(new["views"]):
        o = next((x for x in old["views"] if x["window"] == v["window"]), None) if i >= len(old["views"]) else old["views"][i]
        if o is None:
            continue
        if v["shading"] != o["shading"]:
            yield "shading_changed", {"shading": v["shading"], "old_shading": o["shading"], "window": v["window"]}
        if (v["view"], v["perspective"]) != (o["view"], o["perspective"]):
            yield "view_changed", {"view": v["view"], "perspective": v["perspective"], "old_view": o["view"],
                                   "old_perspective": o["perspective"], "window": v["window"]}
        if v["local_view"] != o["local_view"]:
            yield "local_view_changed", {"local_view": v["local_view"], "window": v["window"],
                                         "objects": sorted(x["name"] for x in new["objects"] if x["local_view"])}

    before = {o["pointer"]: o for o in old["objects"]}
    after = {o["pointer"]: o for o in new["objects"]}
    old_names = {o["name"] for o in old["objects"]}
    removed = [o for p, o in before.items() if p not in after]
    added = [o for p, o in after.items() if p not in before]
    # an object whose pointer changed (undo, file load) but whose name stayed is the same object
    by_name_removed = {o["name"]: o for o in removed}
    pairs = [(before[p], after[p]) for p in after if p in before]
    for o in list(added):
        if o["name"] in by_name_removed:
            pairs.append((by_name_removed.pop(o["name"]), o))
            added.remove(o)
    removed = list(by_name_removed.values())
    grown = []
    for o, n in pairs:
        if o["name"] != n["name"]:
            yield "object_renamed", {"name": n["name"], "old_name": o["name"], "type": n["type"]}
        if n["mode"] != o["mode"]:
            yield "mode_changed", {"object": n["name"], "type": n["type"], "mode": n["mode"], "old_mode": o["mode"]}
        moved = n["location"] != o["location"]
        if "mesh" in n and "mesh" in o and moved and n["mesh"]["world_digest"] == o["mesh"]["world_digest"]:
            yield "origin_changed", {"name": n["name"], "location": n["location"], "old_location": o["location"],
                                     "origin_at_surface_center": n.get("origin_at_surface_center", False)}
        elif moved or n["rotation"] != o["rotation"] or n["scale"] != o["scale"]:
            yield "transform_changed", {"name": n["name"], "type": n["type"], "location": n["location"],
                                        "rotation": n["rotation"], "scale": n["scale"],
                                        "old_location": o["location"], "old_rotation": o["rotation"], "old_scale": o["scale"]}
        for m in n["materials"]:
            if m not in o["materials"]:
                yield "material_assigned", {"object": n["name"], "material": m, "materials": n["materials"]}
        old_mods = [m["name"] for m in o["modifiers"]]
        new_mods = [m["name"] for m in n["modifiers"]]
        geometry_changed = "mesh" in n and "mesh" in o and n["mesh"]["digest"] != o["mesh"]["digest"]
        for m in n["modifiers"]:
            if m["name"] not in old_mods:
                yield "modifier_added", {"object": n["name"], "modifier": m["name"], "modifier_type": m["type"]}
        for m in o["modifiers"]:
            if m["name"] not in new_mods:
                yield ("modifier_applied" if geometry_changed else "modifier_removed"), {
                    "object": n["name"], "modifier": m["name"], "modifier_type": m["type"],
                    "vertices": n.get("mesh", {}).get("vertices"), "old_vertices": o.get("mesh", {}).get("vertices")}
        if geometry_changed and n["mesh"]["vertices"] > o["mesh"]["vertices"]:
            grown.append((o, n))
        if geometry_changed and not (set(old_mods) - set(new_mods)):
            ev = {"object": n["name"], "vertices": n["mesh"]["vertices"], "old_vertices": o["mesh"]["vertices"],
                  "mode": n["mode"]}
            if "coords" in n["mesh"] and "coords" in o["mesh"] and len(n["mesh"]["coords"]) == len(o["mesh"]["coords"]):
                ev["moved"] = [{"from": a, "to": b} for a, b in zip(o["mesh"]["coords"], n["mesh"]["coords"]) if a != b]
            if "coords" in n["mesh"]:
                ev["coords"] = n["mesh"]["coords"]  # where each vertex is now, however many reads it took
            yield "mesh_edited", ev
        sel = n.get("mesh", {}).get("selected")
        if sel is not None and sel != o.get("mesh", {}).get("selected"):
            yield "vertices_selected", {"object": n["name"], "selected": sel, "mode": n["mode"]}
        if n.get("body") != o.get("body"):
            yield "text_changed", {"object": n["name"], "body": n.get("body"), "old_body": o.get("body"), "mode": n["mode"]}
        if n.get("elements") != o.get("elements") and "elements" in n:
            yield "metaball_changed", {"object": n["name"], "elements": n["elements"]}
    for o in removed:
        yield "object_removed", _brief(o)
    if removed and old["objects"] and not new["objects"]:
        yield "scene_cleared", {"removed": sorted(o["name"] for o in old["objects"])}
    removed_meshes = [o["name"] for o in removed if o["type"] == "MESH"]
    for o, n in grown:
        if removed_meshes:
            yield "objects_joined", {"name": n["name"], "joined": removed_meshes, "vertices": n["mesh"]["vertices"],
                                     "old_vertices": o["mesh"]["vertices"],
                                     "removed_vertices": sum(x["mesh"]["vertices"] for x in removed if "mesh" in x)}
    for n in added:
        yield "object_added", {**_brief(n), "new_name": n["name"] not in old_names}
    for m in new["materials"]:
        if m not in old["materials"]:
            yield "material_added", {"material": m}
    if new.get("selection") != old.get("selection"):
        yield "selection_changed", {"selected": new["selected"], "active": new["active"],
                                    "old_selected": old["selected"], "old_active": old["active"]}
