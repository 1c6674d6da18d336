"""Write the OBS scene-collection snapshots (JSON as OBS 29 saves it). Run: python snapshots/obs/build.py

A scene item needs "scale" (else it is drawn at size 0); colours are ABGR integers.
The profile and global.ini are not here: apps/obs/app.toml renders them per run (ports, password, paths).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
ABGR = {"green": 0xFF008000, "red": 0xFF0000FF, "blue": 0xFFFF0000, "yellow": 0xFF00FFFF, "white": 0xFFFFFFFF,
        "purple": 0xFF800080, "orange": 0xFF00A5FF}


def color(name: str, colour: str, w: int = 320, h: int = 180) -> dict:
    return {"id": "color_source_v3", "versioned_id": "color_source_v3", "name": name,
            "settings": {"color": ABGR[colour], "width": w, "height": h}}


def text(name: str, body: str) -> dict:
    return {"id": "text_ft2_source", "versioned_id": "text_ft2_source_v2", "name": name,
            "settings": {"text": body, "font": {"face": "DejaVu Sans", "size": 72, "style": "Book", "flags": 0}}}


def scene(name: str, items: list[str], offsets: dict[str, tuple[float, float]] | None = None) -> dict:
    offsets = offsets or {}
    return {"id": "scene", "versioned_id": "scene", "name": name,
            "settings": {"id_counter": len(items), "custom_size": False,
                         "items": [{"name": n, "id": i + 1, "visible": True, "locked": False,
                                    "pos": {"x": offsets.get(n, (40.0 * i, 40.0 * i))[0],
                                            "y": offsets.get(n, (40.0 * i, 40.0 * i))[1]},
                                    "scale": {"x": 1.0, "y": 1.0}, "rot": 0.0, "align": 5, "bounds_type": 0}
                                   for i, n in enumerate(items)]}}


def collection(name: str, scenes: list[dict], sources: list[dict], current: str) -> dict:
    return {"name": name, "current_scene": current, "current_program_scene": current, "current_transition": "Cut",
            "transition_duration": 300, "scene_order": [{"name": s["name"]} for s in scenes],
            "sources": scenes + sources, "groups": [], "transitions": [], "quick_transitions": [], "modules": {}}


def base() -> dict:
    """Main (a green background and a title), Break (three colour cards), Outro (empty)."""
    scenes = [scene("Main", ["Background", "Title"], {"Background": (0.0, 0.0), "Title": (80.0, 80.0)}),
              scene("Break", ["Red Card", "Blue Card", "Yellow Card"]),
              scene("Outro", [])]
    sources = [color("Background", "green", 1280, 720), text("Title", "Welcome"),
               color("Red Card", "red"), color("Blue Card", "blue"), color("Yellow Card", "yellow")]
    return collection("Task", scenes, sources, "Main")


def write(snapshot: str, coll: dict) -> None:
    out = HERE / snapshot / "basic" / "scenes" / f"{coll['name']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(coll, indent=2) + "\n")


if __name__ == "__main__":
    write("base", base())
