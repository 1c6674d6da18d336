"""A loopback HTTP bridge inside Blender: the MCP server's calls run as Blender's own operators.

Requests arrive on a server thread and run on Blender's main thread (a timer drains them), each through
`bpy.ops` in the context of the first window's 3D view, so they are undoable, show in the GUI and change
the same data -- and so fire the same milestones -- as the same action by hand.
POST / {"method": name, "params": {...}} with the run's secret -> {"result": ...} or {"error": "..."}.
`bpy.ops` releases Python's lock while an operator runs, and Blender then touches Python objects without
it: loading a file does, and so does every context lookup under `temp_override` (it reads the override's
dict, taking the lock only if no thread holds it -- Python 3.11 cannot tell it which thread does). So no
thread of ours may run Python during an operator: every call runs with the probe client's sender held
and nothing in flight (`ProbeClient.held`), the server thread wakes only for a connection, and a file is
opened with every thread parked (`_threads_parked`). Before, Blender crashed about once in 1,000 calls
back to back, and in the container about one open in two.
There is deliberately no "run this Python" method: code in Blender's interpreter could reach the probe.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import queue
import selectors
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import bpy

from . import query as blender_query
from . import state as blender_state

TIMEOUT = 60.0
_calls: queue.Queue = queue.Queue()
_main_in_call = [False]
_during = [None]  # the probe's read between two parts of a call (the target selected, then changed)
_park = {"asked": False, "gate": threading.Lock(), "parked": threading.Event(), "client": None, "held": None,
         "wake": None}
PARKS = {"open_file"}  # parks every thread itself


class BridgeError(Exception):
    pass


def in_call() -> bool:
    return _main_in_call[0]


# -- context -----------------------------------------------------------------------------------
def _view3d(window=None):
    wm = bpy.data.window_managers[0]
    for win in ([window] if window else list(wm.windows)):
        for area in win.screen.areas:
            if area.type == "VIEW_3D":
                region = next(r for r in area.regions if r.type == "WINDOW")
                return win, area, region
    raise BridgeError("no 3D view is open")


def _ctx(**extra):
    win, area, region = _view3d()
    return bpy.context.temp_override(window=win, area=area, region=region, screen=win.screen, **extra)


def _obj(name: str):
    obj = bpy.data.objects.get(name)
    if obj is None:
        raise BridgeError(f"no object named '{name}' (objects: {', '.join(o.name for o in bpy.data.objects) or 'none'})")
    return obj


def _ok(result: set) -> None:
    if "FINISHED" not in result:
        raise BridgeError(f"the operator did not finish ({', '.join(sorted(result))})")


def _select_only(objs, active=None) -> None:
    with _ctx():
        if bpy.context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        bpy.ops.object.select_all(action="DESELECT")
    vl = _view3d()[0].view_layer
    for o in objs:
        o.select_set(True, view_layer=vl)
    vl.objects.active = active or (objs[0] if objs else None)


def checkpoint() -> None:
    """Let the probe read the scene now, inside a call: what the call did so far is reported before the rest
    (the GUI's intermediate states: the object selected before it is changed)."""
    if _during[0] is not None:
        _during[0]()


def _target(obj) -> None:
    """Make `obj` the active, selected object before acting on it, as a person clicks it first (nothing to do
    when it is already: in Edit Mode the object edited is)."""
    vl = _view3d()[0].view_layer
    if vl.objects.active == obj and obj.select_get(view_layer=vl):
        return
    _select_only([obj])
    checkpoint()


# -- methods -----------------------------------------------------------------------------------
MESHES = {"cube": "primitive_cube_add", "plane": "primitive_plane_add", "circle": "primitive_circle_add",
          "uv_sphere": "primitive_uv_sphere_add", "ico_sphere": "primitive_ico_sphere_add",
          "cylinder": "primitive_cylinder_add", "cone": "primitive_cone_add", "torus": "primitive_torus_add",
          "grid": "primitive_grid_add", "monkey": "primitive_monkey_add"}
METABALLS = {"ball", "capsule", "plane", "ellipsoid", "cube"}
OTHERS = {"text": ("object", "text_add"), "camera": ("object", "camera_add"), "empty": ("object", "empty_add"),
          "light": ("object", "light_add")}


def m_state(p):
    return blender_query.read()


def m_scene(p):
    s = blender_state.public(blender_state.read())
    return {**s, "objects": [{k: o[k] for k in ("name", "type", "location", "rotation", "scale", "dimensions",
                                                  "materials", "modifiers", "mode") if k in o} for o in s["objects"]]}


def m_object(p):
    _obj(p["name"])
    return next(o for o in blender_state.public(blender_state.read())["objects"] if o["name"] == p["name"])


def m_add_object(p):
    kind, sub = p["kind"].lower().replace(" ", "_"), (p.get("subtype") or "").lower().replace(" ", "_")
    kw = {k: tuple(p[k]) for k in ("location", "rotation", "scale") if p.get(k) is not None}
    with _ctx():
        if bpy.context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        if kind == "mesh":
            if sub not in MESHES:
                raise BridgeError(f"unknown mesh '{sub}' (one of: {', '.join(MESHES)})")
            _ok(getattr(bpy.ops.mesh, MESHES[sub])(**kw))
        elif kind == "metaball":
            if sub not in METABALLS:
                raise BridgeError(f"unknown metaball '{sub}' (one of: {', '.join(sorted(METABALLS))})")
            _ok(bpy.ops.object.metaball_add(type=sub.upper(), **kw))
        elif kind in OTHERS:
            mod, op = OTHERS[kind]
            extra = {"type": sub.upper()} if kind == "light" and sub else {}
            _ok(getattr(getattr(bpy.ops, mod), op)(**kw, **extra))
        else:
            raise BridgeError(f"unknown kind '{kind}' (one of: mesh, metaball, {', '.join(OTHERS)})")
    obj = bpy.context.view_layer.objects.active
    if p.get("name"):
        obj.name = p["name"]
    return {"name": obj.name, "type": obj.type}


def m_delete_objects(p):
    objs = list(_view3d()[0].view_layer.objects) if p.get("all") else [_obj(n) for n in p.get("names") or []]
    if not objs:
        raise BridgeError("name the objects to delete, or all=true")
    _select_only(objs)
    checkpoint()
    with _ctx():
        _ok(bpy.ops.object.delete())
    return {"deleted": sorted(o for o in (p.get("names") or []))} if not p.get("all") else {"deleted": "all"}


def m_set_transform(p):
    obj = _obj(p["name"])
    _target(obj)
    for k, attr in (("location", "location"), ("rotation", "rotation_euler"), ("scale", "scale")):
        if p.get(k) is not None:
            setattr(obj, attr, tuple(p[k]))
    bpy.ops.ed.undo_push(message="Transform (MCP)")
    return m_object({"name": obj.name})


def m_clear_transform(p):
    obj = _obj(p["name"])
    _target(obj)
    with _ctx():
        for what in p.get("what") or ["location"]:
            op = {"location": bpy.ops.object.location_clear, "rotation": bpy.ops.object.rotation_clear,
                  "scale": bpy.ops.object.scale_clear}.get(what)
            if op is None:
                raise BridgeError(f"unknown '{what}' (location, rotation, scale)")
            _ok(op())
    return m_object({"name": obj.name})


def m_rename_object(p):
    obj = _obj(p["name"])
    _target(obj)
    obj.name = p["new_name"]
    bpy.ops.ed.undo_push(message="Rename (MCP)")
    return {"name": obj.name}


def m_set_mode(p):
    obj = _obj(p["name"]) if p.get("name") else bpy.context.view_layer.objects.active
    if obj is None:
        raise BridgeError("no active object: name one")
    vl = _view3d()[0].view_layer
    with _ctx():
        if bpy.context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
    vl.objects.active = obj
    obj.select_set(True, view_layer=vl)
    checkpoint()
    with _ctx():
        _ok(bpy.ops.object.mode_set(mode=p["mode"].upper()))
    return {"name": obj.name, "mode": obj.mode}


def m_set_view(p):
    view = p["view"].upper()
    with _ctx():
        if view == "CAMERA":
            _ok(bpy.ops.view3d.view_camera())
        else:
            _ok(bpy.ops.view3d.view_axis(type=view))
    return {"view": view}


def m_set_shading(p):
    _, area, _ = _view3d()
    kind = p["type"].upper()
    if kind not in ("WIREFRAME", "SOLID", "MATERIAL", "RENDERED"):
        raise BridgeError("type is one of WIREFRAME, SOLID, MATERIAL, RENDERED")
    area.spaces.active.shading.type = kind
    return {"shading": kind}


def m_local_view(p):
    _, area, _ = _view3d()
    space = area.spaces.active
    if p.get("names"):
        _select_only([_obj(n) for n in p["names"]])
        checkpoint()
    with _ctx():
        _ok(bpy.ops.view3d.localview())
    return {"local_view": space.local_view is not None}


def m_add_material(p):
    obj = _obj(p["object"])
    _target(obj)
    mat = bpy.data.materials.get(p.get("material") or "") or bpy.data.materials.new(p.get("material") or "Material")
    mat.use_nodes = True
    if p.get("color"):
        mat.diffuse_color = (*p["color"][:3], 1.0)
        bsdf = mat.node_tree.nodes.get("Principled BSDF")
        if bsdf:
            bsdf.inputs["Base Color"].default_value = (*p["color"][:3], 1.0)
    obj.data.materials.append(mat)
    bpy.ops.ed.undo_push(message="Add Material (MCP)")
    return {"object": obj.name, "material": mat.name}


def m_add_modifier(p):
    """As Properties > Modifiers > Add Modifier (or Ctrl+1 for a subdivision) does: `object.modifier_add`."""
    obj = _obj(p["object"])
    _target(obj)
    with _ctx(object=obj):
        _ok(bpy.ops.object.modifier_add(type=p["type"].upper()))
    mod = obj.modifiers[-1]
    if p.get("name"):
        mod.name = p["name"]
    for k, v in (p.get("settings") or {}).items():
        if not hasattr(mod, k):
            raise BridgeError(f"a {mod.type} modifier has no setting '{k}'")
        setattr(mod, k, v)
    bpy.ops.ed.undo_push(message="Add Modifier (MCP)")
    return {"object": obj.name, "modifier": mod.name, "type": mod.type}


def m_apply_modifier(p):
    obj = _obj(p["object"])
    name = p.get("modifier") or (obj.modifiers[0].name if obj.modifiers else None)
    if name is None or name not in obj.modifiers:
        raise BridgeError(f"'{obj.name}' has no modifier '{name}' (modifiers: {', '.join(m.name for m in obj.modifiers) or 'none'})")
    _target(obj)
    with _ctx(object=obj):
        _ok(bpy.ops.object.modifier_apply(modifier=name))
    return m_object({"name": obj.name})


def m_join_objects(p):
    objs = [_obj(n) for n in p["names"]]
    into = _obj(p.get("into") or p["names"][0])
    _select_only(objs, active=into)
    checkpoint()
    with _ctx():
        _ok(bpy.ops.object.join())
    return {"name": into.name}


def m_set_origin(p):
    obj = _obj(p["object"])
    _target(obj)
    with _ctx():
        _ok(bpy.ops.object.origin_set(type=p["type"].upper(), center=p.get("center", "MEDIAN").upper()))
    return m_object({"name": obj.name})


def m_move_vertices(p):
    """As by hand: in Edit Mode (entered for the moves, and left again if the object was not in it), each
    vertex selected alone and then moved, the probe reading the scene in between."""
    import bmesh
    from mathutils import Vector
    obj = _obj(p["object"])
    if obj.type != "MESH":
        raise BridgeError(f"'{obj.name}' is not a mesh")
    was_editing = obj.mode == "EDIT"
    _target(obj)
    if not was_editing:
        with _ctx():
            _ok(bpy.ops.object.mode_set(mode="EDIT"))
        checkpoint()
    me = obj.data
    bm = bmesh.from_edit_mesh(me)
    targets = []
    for mv in p["moves"]:
        src = Vector(mv["from"])
        v = next((v for v in bm.verts if (v.co - src).length < 1e-4 and v not in targets), None)
        if v is None:
            if not was_editing:
                with _ctx():
                    bpy.ops.object.mode_set(mode="OBJECT")
            raise BridgeError(f"no vertex at {mv['from']}")
        targets.append(v)
    for v, mv in zip(targets, p["moves"]):
        for seq in (bm.verts, bm.edges, bm.faces):
            for item in seq:
                item.select = False
        v.select = True
        bm.select_flush_mode()
        bmesh.update_edit_mesh(me)
        checkpoint()
        v.co = Vector(mv["to"])
        bmesh.update_edit_mesh(me)
        bpy.ops.ed.undo_push(message="Move Vertex (MCP)")
        checkpoint()
    if not was_editing:
        with _ctx():
            _ok(bpy.ops.object.mode_set(mode="OBJECT"))
    return {"object": obj.name, "moved": p["moves"]}


def m_set_text(p):
    obj = _obj(p["object"])
    if obj.type != "FONT":
        raise BridgeError(f"'{obj.name}' is not a text object")
    _target(obj)
    if obj.mode == "EDIT":
        with _ctx():
            bpy.ops.object.mode_set(mode="OBJECT")
        obj.data.body = p["text"]
        with _ctx():
            bpy.ops.object.mode_set(mode="EDIT")
    else:
        obj.data.body = p["text"]
    bpy.ops.ed.undo_push(message="Set Text (MCP)")
    return {"object": obj.name, "body": obj.data.body}


def m_set_metaball_element(p):
    """An element of a metaball (Properties > Data > Active Element, or the element edited in Edit Mode)."""
    obj = _obj(p["object"])
    if obj.type != "META":
        raise BridgeError(f"'{obj.name}' is not a metaball")
    elements = obj.data.elements
    i = int(p.get("index") or 0)
    if not 0 <= i < len(elements):
        raise BridgeError(f"'{obj.name}' has {len(elements)} element(s): index 0 to {len(elements) - 1}")
    _target(obj)
    e = elements[i]
    if p.get("type"):
        e.type = p["type"].upper()
    for k in ("radius", "stiffness"):
        if p.get(k) is not None:
            setattr(e, k, float(p[k]))
    if p.get("size") is not None:
        e.size_x, e.size_y, e.size_z = (float(x) for x in p["size"])
    if p.get("co") is not None:
        e.co = tuple(p["co"])
    obj.data.update_tag()
    bpy.ops.ed.undo_push(message="Metaball Element (MCP)")
    return {"object": obj.name, "index": i, "type": e.type, "co": list(e.co), "radius": e.radius,
            "stiffness": e.stiffness, "size": [e.size_x, e.size_y, e.size_z]}


def _path(p, key="path") -> str:
    path = os.path.expanduser(p[key])
    if not os.path.isabs(path):
        raise BridgeError(f"{key} must be an absolute path")
    return path


def m_open_file(p):
    path = _path(p)
    if not os.path.isfile(path):
        raise BridgeError(f"no file {path}")
    with _threads_parked(), _ctx():
        _ok(bpy.ops.wm.open_mainfile(filepath=path))
    return {"path": bpy.data.filepath}


def m_save_file(p):
    path = _path(p) if p.get("path") else bpy.data.filepath
    if not path:
        raise BridgeError("the file has never been saved: give a path")
    with _ctx():
        _ok(bpy.ops.wm.save_as_mainfile(filepath=path))
    return {"path": bpy.data.filepath}


def m_import_obj(p):
    paths = [os.path.expanduser(x) for x in p["paths"]]
    names = []
    for path in paths:
        if not os.path.isfile(path):
            raise BridgeError(f"no file {path}")
        before = set(bpy.data.objects.keys())
        with _ctx():
            _ok(bpy.ops.wm.obj_import(filepath=path))
        names += sorted(set(bpy.data.objects.keys()) - before)
    return {"imported": names}


def m_new_window(p):
    win, area, region = _view3d()
    with bpy.context.temp_override(window=win, area=area, region=region):
        _ok(bpy.ops.wm.window_new())
    return {"windows": len(bpy.data.window_managers[0].windows)}


METHODS = {name[2:]: fn for name, fn in globals().items() if name.startswith("m_")}


# -- plumbing ----------------------------------------------------------------------------------
@contextlib.contextmanager
def _threads_parked():
    """The bridge's server thread and the probe client's threads wait, outside Python, for the block.
    (The handler thread of the call being run is already waiting for it.)"""
    with _park["gate"]:
        _park["asked"] = True
        os.write(_park["wake"], b"p")
        try:
            with _park["client"]() as _:
                if _park["parked"].wait(1.0):
                    time.sleep(0.005)  # its last steps from "parked" into the gate's wait
                yield
        finally:
            _park["asked"] = False


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def _serve(server: _Server, wake: int) -> None:
    """The server thread: it wakes for a connection or a park request, never on a timer (a poll would run
    Python beside an operator)."""
    with selectors.DefaultSelector() as sel:
        sel.register(server.socket, selectors.EVENT_READ, "connection")
        sel.register(wake, selectors.EVENT_READ, "wake")
        while True:
            for key, _ in sel.select():
                if key.data == "connection":
                    server.handle_request()
                    continue
                os.read(wake, 64)
                if _park["asked"]:
                    _park["parked"].set()
                    with _park["gate"]:
                        _park["parked"].clear()


def drain(before_call, after_call, during_call=None) -> float:
    """The main-thread timer: run queued calls; returns its next interval. `before_call` runs outside the
    call, so what changed before it (by hand, while the main thread was too busy to poll) is not taken
    for the call's doing."""
    while True:
        try:
            method, params, box, done = _calls.get_nowait()
        except queue.Empty:
            return 0.02
        try:
            before_call(method)
        except Exception:
            pass
        _main_in_call[0] = True
        _during[0] = (lambda m=method: during_call(m)) if during_call else None
        try:
            with contextlib.nullcontext() if method in PARKS else _park["held"]():
                box["result"] = METHODS[method](params)
        except BridgeError as e:
            box["error"] = str(e)
        except Exception as e:
            box["error"] = f"{type(e).__name__}: {e}"
            box["trace"] = traceback.format_exc()[-2000:]
        finally:
            try:
                after_call(method)
            finally:
                _main_in_call[0] = False
                _during[0] = None
                done.set()


def serve(port: int, secret: str, host: str, on_refused, flush, client_paused, client_held) -> ThreadingHTTPServer:
    """`client_paused`, `client_held`: the probe client's context managers that park its threads, or hold
    its sender with nothing in flight."""
    _park["client"], _park["held"] = client_paused, client_held
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            auth = self.headers.get("Authorization", "")
            if not hmac.compare_digest(auth.encode(), f"Bearer {secret}".encode()):
                on_refused(self.client_address[0])
                return self._reply(401, {"error": "unauthorized"})
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                method, params = req["method"], req.get("params") or {}
            except Exception as e:
                return self._reply(400, {"error": f"bad request: {e}"})
            if method not in METHODS:
                return self._reply(404, {"error": f"unknown method '{method}'"})
            box, done = {}, threading.Event()
            _calls.put((method, params, box, done))
            if not done.wait(TIMEOUT):
                return self._reply(504, {"error": f"'{method}' did not finish in {TIMEOUT:.0f} s"})
            flush()
            self._reply(200, box)

        def _reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = _Server((host, port), Handler)
    wake, _park["wake"] = os.pipe()
    threading.Thread(target=_serve, args=(server, wake), name="mcpworld-bridge", daemon=True).start()
    return server
