"""Blender's state as the state query gives it: what a task may change and what a careless agent could,
every datablock keyed by its session id.

Blender keeps names unique per kind of datablock, but a name is not an identity: a renamed object would read
as one removed and another added, the same as an object deleted and a new one made under the new name. Each
datablock carries `ID.session_uuid`, a number Blender gives it once and keeps through renames and undo (it
exists for undo: the depsgraph uses it to find an ID again after an undo step), and gives afresh to every
datablock of a file that is opened. Blender 3.4 does not expose it to Python, so it is read from the ID's
memory at the offset Blender 3.4's DNA gives it (`ID.session_uuid`, 132 bytes in on 64-bit builds), after
checking that the two fields around it are where that DNA says: the name at 40 and the user count at 112.
A Blender whose layout differs fails the read (a probe error), never a silent wrong key.

Runs on Blender's main thread (the bridge's `state` method).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct

import bpy

from . import state as s

ID_NAME, ID_USERS, ID_SESSION_UUID = 40, 112, 132  # offsets in DNA's ID struct, Blender 3.4, 64-bit
# collections with a record of their own, and the window manager's UI: not `datablocks`
OWN = {"objects", "materials", "scenes", "collections"}
UI = {"window_managers", "screens", "workspaces"}
# a modifier's settings that are the panel's UI, not the modifier
MODIFIER_UI = {"rna_type", "name", "type", "show_expanded", "is_active", "is_override_data"}


class LayoutError(RuntimeError):
    pass


def uid(idb) -> int:
    """The datablock's session id, read from its memory once its name and user count are checked there."""
    ptr = idb.as_pointer()
    raw = ctypes.string_at(ptr + ID_NAME, 66).split(b"\0", 1)[0]
    if raw[2:] != idb.name.encode():
        raise LayoutError(f"ID.name is not at {ID_NAME} in this Blender ({raw!r} for {idb.name!r})")
    users, = struct.unpack("<i", ctypes.string_at(ptr + ID_USERS, 4))
    if users != idb.users:
        raise LayoutError(f"ID.us is not at {ID_USERS} in this Blender")
    value, = struct.unpack("<I", ctypes.string_at(ptr + ID_SESSION_UUID, 4))
    if value == 0:
        raise LayoutError(f"{idb.name}: no session id at {ID_SESSION_UUID}")
    return value


def kept(idb) -> bool:
    """Would Blender write it into the file: a datablock with users, or a fake one (texts always)."""
    return idb.users > 0 or idb.use_fake_user or isinstance(idb, bpy.types.Text)


def _name(idb) -> str | None:
    return idb.name if idb is not None else None


def _color(c) -> list[float]:
    return [s.num(x) for x in c]


def _modifier(m) -> dict:
    out = {"name": m.name, "type": m.type}
    settings = {}
    for p in m.bl_rna.properties:
        k = p.identifier
        if k in MODIFIER_UI or p.type in ("POINTER", "COLLECTION"):
            continue
        v = getattr(m, k, None)
        if p.type == "FLOAT":
            v = s.num(v) if getattr(p, "array_length", 0) == 0 else _color(v)
        elif p.type in ("INT", "BOOLEAN") and getattr(p, "array_length", 0):
            v = list(v)
        elif p.type == "ENUM" and getattr(p, "is_enum_flag", False):
            v = sorted(v)
        settings[k] = v
    out["settings"] = settings
    return out


def _object(obj, view_layer) -> dict:
    d = {"uid": uid(obj), "name": obj.name, "type": obj.type, "data": _name(obj.data),
         "parent": _name(obj.parent), "collections": sorted(c.name for c in obj.users_collection),
         "location": s.vec(obj.location), "rotation": s.vec(obj.rotation_euler), "scale": s.vec(obj.scale),
         "dimensions": s.vec(obj.dimensions), "mode": obj.mode,
         "hidden": obj.hide_get(view_layer=view_layer) if obj.name in view_layer.objects else None,
         "hide_viewport": obj.hide_viewport, "hide_render": obj.hide_render,
         "materials": [_name(slot.material) for slot in obj.material_slots],
         "modifiers": [_modifier(m) for m in obj.modifiers]}
    if obj.type == "MESH":
        mesh = s._mesh(obj)
        mesh.pop("world_digest", None)
        mesh.pop("selected", None)  # Edit Mode's selection: where the user clicked
        d["mesh"] = mesh
        d["primitive"] = s.PRIMITIVES.get((mesh["vertices"], mesh["faces"]))
        d["origin_at_surface_center"] = ("surface_center" in mesh and max(
            abs(a - b) for a, b in zip(mesh["surface_center"], s.vec(s._world_matrix(obj).translation))) < 1e-3)
    elif obj.type == "FONT":
        d["body"] = obj.data.body
    elif obj.type == "META":
        d["elements"] = [{"type": e.type, "co": s.vec(e.co), "radius": s.num(e.radius), "stiffness": s.num(e.stiffness),
                          "size": [s.num(e.size_x), s.num(e.size_y), s.num(e.size_z)]} for e in obj.data.elements]
    elif obj.type == "CAMERA":
        d["camera"] = {"type": obj.data.type, "lens": s.num(obj.data.lens)}
    elif obj.type == "LIGHT":
        d["light"] = {"type": obj.data.type, "energy": s.num(obj.data.energy), "color": _color(obj.data.color)}
    return d


def _material(m) -> dict:
    d = {"uid": uid(m), "name": m.name, "color": _color(m.diffuse_color), "metallic": s.num(m.metallic),
         "roughness": s.num(m.roughness), "use_nodes": m.use_nodes}
    bsdf = m.node_tree.nodes.get("Principled BSDF") if m.use_nodes and m.node_tree else None
    if bsdf is not None:
        d["base_color"] = _color(bsdf.inputs["Base Color"].default_value)
    return d


def _scene(sc) -> dict:
    r = sc.render
    return {"uid": uid(sc), "name": sc.name, "camera": _name(sc.camera), "world": _name(sc.world),
            "frame_start": sc.frame_start, "frame_end": sc.frame_end, "frame_current": sc.frame_current,
            "engine": r.engine, "resolution": [r.resolution_x, r.resolution_y, r.resolution_percentage],
            "unit_system": sc.unit_settings.system, "collections": sorted(c.name for c in sc.collection.children)}


def _collection(c) -> dict:
    return {"uid": uid(c), "name": c.name, "children": sorted(x.name for x in c.children),
            "hide_viewport": c.hide_viewport, "hide_render": c.hide_render}


def _datablocks(object_data: set[int]) -> list[dict]:
    out = []
    for kind in dir(bpy.data):
        coll = getattr(bpy.data, kind, None)
        if kind in OWN or kind in UI or not isinstance(coll, bpy.types.bpy_prop_collection):
            continue
        for idb in coll:
            if not isinstance(idb, bpy.types.ID) or not kept(idb) or idb.as_pointer() in object_data:
                continue
            d = {"uid": uid(idb), "kind": kind, "name": idb.name}
            if isinstance(idb, bpy.types.Text):
                d["digest"] = hashlib.sha1(idb.as_string().encode()).hexdigest()[:16]
            out.append(d)
    return out


def _views(wm, local: dict) -> list[dict]:
    out = []
    for wi, win in enumerate(wm.windows):
        for ai, area in enumerate(win.screen.areas):
            if area.type != "VIEW_3D":
                continue
            space, rv3d = area.spaces.active, area.spaces.active.region_3d
            out.append({"id": f"{wi}.{ai}", "window": wi, "shading": space.shading.type,
                        "view": s.named_view(rv3d.view_rotation), "perspective": rv3d.view_perspective,
                        "local_view": space.local_view is not None,
                        "local_objects": sorted(local.get((wi, ai), ()))})
    return out


def _local(wm) -> dict:
    """The objects in each 3D view's local view (set on the evaluated objects only)."""
    out = {}
    for wi, win in enumerate(wm.windows):
        for ai, area in enumerate(win.screen.areas):
            if area.type == "VIEW_3D" and area.spaces.active.local_view is not None:
                depsgraph = bpy.context.evaluated_depsgraph_get()
                out[(wi, ai)] = [o.name for o in win.view_layer.objects
                                 if o.evaluated_get(depsgraph).local_view_get(area.spaces.active)]
    return out


def read() -> dict:
    wm = bpy.data.window_managers[0]
    win = wm.windows[0] if wm.windows else None
    view_layer = win.view_layer if win else bpy.context.view_layer
    s._flush_text_edits(view_layer)
    objects = [_object(o, view_layer) for o in bpy.data.objects]
    object_data = {o.data.as_pointer() for o in bpy.data.objects if o.data is not None}
    active = view_layer.objects.active
    path = bpy.data.filepath
    return {
        "file": {"path": path, "on_disk": bool(path) and os.path.isfile(path)},
        "scene": win.scene.name if win else bpy.context.scene.name,
        "windows": sum(1 for w in wm.windows if not w.screen.is_temporary),
        "views": _views(wm, _local(wm)),
        "objects": sorted(objects, key=lambda o: o["uid"]),
        "materials": sorted((_material(m) for m in bpy.data.materials if kept(m)), key=lambda m: m["uid"]),
        "scenes": sorted((_scene(x) for x in bpy.data.scenes), key=lambda x: x["uid"]),
        "collections": sorted((_collection(c) for c in bpy.data.collections if kept(c)), key=lambda c: c["uid"]),
        "datablocks": sorted(_datablocks(object_data), key=lambda d: d["uid"]),
        "unsaved": bpy.data.is_dirty,
        "mode": active.mode if active else "OBJECT",
        "active": _name(active),
        "selected": sorted(o.name for o in view_layer.objects if o.select_get(view_layer=view_layer)),
    }
