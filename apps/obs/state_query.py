"""OBS's end-of-run state: scenes, their items, sources, filters, transitions, outputs, profile.

Read over obs-websocket while OBS runs; from the scene collection file (OBS saves it after every
change) when OBS is gone.
"""

from __future__ import annotations

import configparser
import json
import logging
import os
from pathlib import Path

logging.getLogger("obsws_python").setLevel(logging.CRITICAL)

# profile parameters tasks look at (category, name)
# what OBS assumes for profile parameters its basic.ini leaves out (its config defaults, which obs-websocket
# reports): so that a state read from the files compares with one read live
PROFILE_DEFAULTS = {("SimpleOutput", "VBitrate"): "2500", ("SimpleOutput", "ABitrate"): "160",
                    ("SimpleOutput", "Preset"): "veryfast", ("SimpleOutput", "RecQuality"): "Stream",
                    ("SimpleOutput", "RecRB"): "false", ("SimpleOutput", "RecRBTime"): "20"}
# the transitions every collection has, by the kind obs-websocket names; Cut has no duration of its own
BUILTIN_TRANSITIONS = {"Cut": "cut_transition", "Fade": "fade_transition"}
PROFILE_PARAMS = [("Output", "Mode"), ("SimpleOutput", "FilePath"), ("SimpleOutput", "RecFormat"),
                  ("SimpleOutput", "VBitrate"), ("SimpleOutput", "ABitrate"), ("SimpleOutput", "Preset"),
                  ("SimpleOutput", "RecRB"), ("SimpleOutput", "RecRBTime"), ("SimpleOutput", "RecQuality")]


def query(ctx) -> dict:
    state = None
    if ctx.app_alive:
        try:
            state = {**_from_websocket(ctx), "read_from": "websocket"}
        except Exception:  # OBS died after all, or stopped answering: read what it saved
            state = None
    if state is None:
        state = {**_from_files(ctx), "read_from": "files"}
    state["videos"] = _files(ctx.values.path("videos"))
    return state


THUMB = (16, 9)  # each scene as OBS renders it, this small: what a saved screenshot is compared with


def _thumbnail(reply: dict) -> list[list[int]]:
    """The RGB pixels of OBS's own small render of a scene (GetSourceScreenshot's base64 data URL)."""
    import base64
    import io

    from PIL import Image

    data = base64.b64decode(reply["imageData"].split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as im:
        return [list(px) for px in im.convert("RGB").resize(THUMB).getdata()]


def _files(folder: str) -> list[dict]:
    out = []
    for root, _dirs, files in os.walk(folder):
        for f in sorted(files):
            p = Path(root) / f
            out.append({"path": str(p), "name": f, "suffix": p.suffix.lstrip("."), "size": p.stat().st_size})
    return out


def _from_websocket(ctx) -> dict:
    import obsws_python as obsws

    c = obsws.ReqClient(host=ctx.values.app_host, port=ctx.values.port("ws"), password=ctx.values.secret("ws"),
                        timeout=ctx.timeout)
    try:
        def req(name, data=None):
            return c.send(name, data, raw=True) or {}

        scenes = req("GetSceneList")
        scene_names = [s["sceneName"] for s in reversed(scenes["scenes"])]
        items = {}
        for name in scene_names:
            items[name] = [{"source": i["sourceName"], "kind": i.get("inputKind"), "visible": i["sceneItemEnabled"],
                            "locked": i.get("sceneItemLocked", False), "transform": _ws_transform(i.get("sceneItemTransform") or {})}
                           for i in req("GetSceneItemList", {"sceneName": name})["sceneItems"]]
        inputs = {}
        filters = {}
        for i in req("GetInputList")["inputs"]:
            inputs[i["inputName"]] = {"kind": i["inputKind"],
                                      "settings": req("GetInputSettings", {"inputName": i["inputName"]})["inputSettings"]}
        for name in [*inputs, *scene_names]:
            fl = req("GetSourceFilterList", {"sourceName": name})["filters"]
            if fl:
                filters[name] = [{"name": f["filterName"], "kind": f["filterKind"], "enabled": f["filterEnabled"],
                                  "settings": f["filterSettings"]} for f in fl]
        tlist = req("GetSceneTransitionList")
        cur = req("GetCurrentSceneTransition")
        profiles = req("GetProfileList")
        collections = req("GetSceneCollectionList")
        params: dict[str, dict] = {}
        for cat, name in PROFILE_PARAMS:
            params.setdefault(cat, {})[name] = req("GetProfileParameter", {"parameterCategory": cat,
                                                                         "parameterName": name}).get("parameterValue")
        service = req("GetStreamServiceSettings")
        video = req("GetVideoSettings")
        thumbs = {name: _thumbnail(req("GetSourceScreenshot", {"sourceName": name, "imageFormat": "png",
                                                               "imageWidth": THUMB[0], "imageHeight": THUMB[1]}))
                  for name in scene_names}
        return {
            "scene_thumbs": thumbs,
            "scenes": scene_names, "program_scene": scenes["currentProgramSceneName"], "scene_items": items,
            "inputs": inputs, "filters": filters,
            "transitions": [{"name": t["transitionName"], "kind": t["transitionKind"]} for t in tlist["transitions"]],
            "transition": {"name": cur.get("transitionName"), "kind": cur.get("transitionKind"),
                           "duration_ms": cur.get("transitionDuration"), "settings": cur.get("transitionSettings")},
            "recording": req("GetRecordStatus")["outputActive"],
            "record_directory": req("GetRecordDirectory")["recordDirectory"],
            "profile": profiles["currentProfileName"], "profiles": profiles["profiles"], "profile_params": params,
            "scene_collection": collections["currentSceneCollectionName"],
            "scene_collections": collections["sceneCollections"],
            "stream_service": {"kind": service["streamServiceType"], "settings": service["streamServiceSettings"]},
            "video": video,
            "audio": _audio(req, inputs), "studio_mode": req("GetStudioModeEnabled")["studioModeEnabled"],
            "streaming": req("GetStreamStatus")["outputActive"],
        }
    finally:
        c.disconnect()


def _audio(req, inputs: dict) -> dict:
    """Muted and volume of every source that has audio (obs-websocket refuses the others)."""
    from obsws_python.error import OBSSDKRequestError

    out = {}
    for name in inputs:
        try:
            out[name] = {"muted": req("GetInputMute", {"inputName": name})["inputMuted"],
                         "volume_mul": round(req("GetInputVolume", {"inputName": name})["inputVolumeMul"], 4)}
        except OBSSDKRequestError:
            continue
    return out


def _ws_transform(t: dict) -> dict:
    """Where a scene item sits (position, scale, rotation, crop): the same record from obs-websocket as from
    the scene collection's file, so that moving a source is a change the state diff sees."""
    return {"x": t.get("positionX", 0.0), "y": t.get("positionY", 0.0), "scale_x": t.get("scaleX", 1.0),
            "scale_y": t.get("scaleY", 1.0), "rotation": t.get("rotation", 0.0),
            "crop": [t.get("cropLeft", 0), t.get("cropTop", 0), t.get("cropRight", 0), t.get("cropBottom", 0)]}


def _file_transform(i: dict) -> dict:
    pos, scale = i.get("pos") or {}, i.get("scale") or {}
    return {"x": pos.get("x", 0.0), "y": pos.get("y", 0.0), "scale_x": scale.get("x", 1.0), "scale_y": scale.get("y", 1.0),
            "rotation": i.get("rot", 0.0),
            "crop": [i.get("crop_left", 0), i.get("crop_top", 0), i.get("crop_right", 0), i.get("crop_bottom", 0)]}


def _file_transition(data: dict) -> dict:
    name = data.get("current_transition")
    custom = {t.get("name"): t for t in data.get("transitions", [])}
    kind = BUILTIN_TRANSITIONS.get(name) or custom.get(name, {}).get("id")
    return {"name": name, "kind": kind, "duration_ms": None if kind == "cut_transition" else data.get("transition_duration"),
            "settings": custom.get(name, {}).get("settings")}


def _from_files(ctx) -> dict:
    config = Path(ctx.values.path("config"))
    glob = configparser.ConfigParser(strict=False, interpolation=None)
    glob.optionxform = str
    glob.read(config / "global.ini")
    coll_file = glob.get("Basic", "SceneCollectionFile", fallback="Task")
    profile_dir = glob.get("Basic", "ProfileDir", fallback="Task")
    data = json.loads((config / "basic" / "scenes" / f"{coll_file}.json").read_text())
    sources = {s["name"]: s for s in data.get("sources", [])}
    scene_names = [s["name"] for s in data.get("scene_order", [])]
    kind = {n: src.get("versioned_id") or src.get("id") for n, src in sources.items()}
    items = {n: [{"source": i["name"], "kind": kind.get(i["name"]), "visible": i.get("visible", True),
                  "locked": i.get("locked", False), "transform": _file_transform(i)}
                 for i in sources.get(n, {}).get("settings", {}).get("items", [])] for n in scene_names}
    inputs = {n: {"kind": kind[n], "settings": s.get("settings", {})} for n, s in sources.items() if s["id"] != "scene"}
    filters = {n: [{"name": f["name"], "kind": f["id"], "enabled": f.get("enabled", True), "settings": f.get("settings", {})}
                   for f in s.get("filters", [])] for n, s in sources.items() if s.get("filters")}
    prof = configparser.ConfigParser(strict=False, interpolation=None)
    prof.optionxform = str
    prof.read(config / "basic" / "profiles" / profile_dir / "basic.ini")
    params: dict[str, dict] = {}
    for c, n in PROFILE_PARAMS:
        params.setdefault(c, {})[n] = prof.get(c, n, fallback=PROFILE_DEFAULTS.get((c, n)))
    return {"scenes": scene_names, "program_scene": data.get("current_program_scene"), "scene_items": items,
            "inputs": inputs, "filters": filters,
            "transition": _file_transition(data),
            "profile": glob.get("Basic", "Profile", fallback=None), "profile_params": params,
            "scene_collection": data.get("name"), "recording": False}
