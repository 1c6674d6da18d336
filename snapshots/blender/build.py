"""Write Blender's snapshots with Blender itself (in the background, factory settings). Run:
python snapshots/blender/build.py

    config/             ~/.config/blender: preferences only (start-up scene: the factory Cube, Camera, Light)
    config-metaball/    the same preferences, and a start-up scene with a metaball Cube element beside them
    documents/          ~/Documents: scenes/*.blend to open, models/*.obj to import

Preferences: no splash (no first-run "quick setup"; Blender 3.4 has no online access to switch off), no auto-save or recovery files,
no anti-aliasing in the viewport and no tooltips (fewer software-GL frames and fewer pop-ups in the way
of a GUI oracle), undo kept. Everything is written in a fixed order from fixed values, so a rebuild
makes the same scenes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERSION = "3.4"

PREFS = """
import bpy
p = bpy.context.preferences
p.view.show_splash = False
p.view.show_tooltips = False
p.filepaths.use_auto_save_temporary_files = False
p.filepaths.use_load_ui = True
p.filepaths.save_version = 0
p.system.viewport_aa = "OFF"
p.edit.undo_steps = 64
p.use_preferences_save = False
bpy.ops.wm.save_userpref()
"""

METABALL_STARTUP = """
import bpy
bpy.ops.object.metaball_add(type="CUBE", location=(1.5, -1.0, 0.75))
mb = bpy.context.object
mb.name = "Mball"
bpy.ops.object.select_all(action="DESELECT")
bpy.data.objects["Cube"].select_set(True)
bpy.context.view_layer.objects.active = bpy.data.objects["Cube"]
bpy.ops.wm.save_homefile()
"""

# the scenes a task opens (names and positions fixed); each differs visibly from the start-up scene
SCENES = """
import bpy, sys
out = sys.argv[sys.argv.index("--") + 1]
def clear():
    bpy.ops.object.select_all(action="SELECT")
    bpy.ops.object.delete()
clear()
bpy.ops.mesh.primitive_uv_sphere_add(location=(0, 0, 1))
bpy.context.object.name = "Planet"
bpy.ops.mesh.primitive_torus_add(location=(0, 0, 1))
bpy.context.object.name = "Ring"
bpy.ops.object.light_add(type="SUN", location=(4, -4, 6))
bpy.ops.object.camera_add(location=(7, -7, 5), rotation=(1.1, 0, 0.785))
bpy.ops.wm.save_as_mainfile(filepath=out + "/scenes/orbit.blend", compress=True)
clear()
bpy.ops.mesh.primitive_plane_add(size=10)
bpy.context.object.name = "Floor"
bpy.ops.object.light_add(type="AREA", location=(0, 0, 5))
bpy.ops.object.camera_add(location=(8, -8, 6), rotation=(1.1, 0, 0.785))
bpy.ops.wm.save_as_mainfile(filepath=out + "/scenes/workshop.blend", compress=True)
"""

# OBJ files written as text: a named object each, small enough to read
OBJS = {
    "pyramid.obj": ("Pyramid", [(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0), (0, 0, 1.5)],
                    [(1, 2, 3, 4), (1, 2, 5), (2, 3, 5), (3, 4, 5), (4, 1, 5)]),
    "wedge.obj": ("Wedge", [(0, 0, 0), (2, 0, 0), (2, 1, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1)],
                  [(1, 2, 3, 4), (1, 2, 5), (4, 3, 6), (1, 5, 6, 4), (2, 3, 6, 5)]),
    "prism.obj": ("Prism", [(0, 0, 0), (1, 0, 0), (0.5, 0.866, 0), (0, 0, 2), (1, 0, 2), (0.5, 0.866, 2)],
                  [(1, 2, 3), (4, 5, 6), (1, 2, 5, 4), (2, 3, 6, 5), (3, 1, 4, 6)]),
}


def obj_text(name: str, verts, faces) -> str:
    lines = [f"# {name}, written by snapshots/blender/build.py", f"o {name}"]
    lines += [f"v {x:.4f} {y:.4f} {z:.4f}" for x, y, z in verts]
    lines += ["f " + " ".join(str(i) for i in f) for f in faces]
    return "\n".join(lines) + "\n"


def blender(script: str, config: Path, *args: str, factory: bool = True) -> None:
    env = {**os.environ, "BLENDER_USER_CONFIG": str(config)}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        subprocess.run(["blender", "-b", *(["--factory-startup"] if factory else []), "--python-exit-code", "1",
                        "--python", f.name, "--", *args], env=env, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        sys.exit(f"blender failed:\n{e.stdout[-2000:]}\n{e.stderr[-2000:]}")
    finally:
        os.unlink(f.name)


def main() -> None:
    config = HERE / "config" / VERSION / "config"
    shutil.rmtree(HERE / "config", ignore_errors=True)
    config.mkdir(parents=True)
    blender(PREFS, config)

    meta = HERE / "config-metaball" / VERSION / "config"
    shutil.rmtree(HERE / "config-metaball", ignore_errors=True)
    meta.parent.mkdir(parents=True)
    shutil.copytree(config, meta)
    blender(METABALL_STARTUP, meta, factory=False)

    docs = HERE / "documents"
    shutil.rmtree(docs, ignore_errors=True)
    (docs / "models").mkdir(parents=True)
    (docs / "scenes").mkdir(parents=True)
    blender(SCENES, config, str(docs))
    for fname, (name, verts, faces) in OBJS.items():
        (docs / "models" / fname).write_text(obj_text(name, verts, faces))
    for p in sorted(HERE.rglob("*")):
        if p.is_file():
            print(p.relative_to(HERE), p.stat().st_size)


if __name__ == "__main__":
    main()
