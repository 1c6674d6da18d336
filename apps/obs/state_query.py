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
            items[name] = [{"source": i["sourceName"], "kind": i.get("inputKind"), "visible": i["sceneItemEnabled"]}
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
        return {
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
        }
    finally:
        c.disconnect()


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
    items = {n: [{"source": i["name"], "kind": sources.get(i["name"], {}).get("id"), "visible": i.get("visible", True)}
                 for i in sources.get(n, {}).get("settings", {}).get("items", [])] for n in scene_names}
    inputs = {n: {"kind": s["id"], "settings": s.get("settings", {})} for n, s in sources.items() if s["id"] != "scene"}
    filters = {n: [{"name": f["name"], "kind": f["id"], "enabled": f.get("enabled", True), "settings": f.get("settings", {})}
                   for f in s.get("filters", [])] for n, s in sources.items() if s.get("filters")}
    prof = configparser.ConfigParser(strict=False, interpolation=None)
    prof.optionxform = str
    prof.read(config / "basic" / "profiles" / profile_dir / "basic.ini")
    params: dict[str, dict] = {}
    for c, n in PROFILE_PARAMS:
        params.setdefault(c, {})[n] = prof.get(c, n, fallback=None)
    return {"scenes": scene_names, "program_scene": data.get("current_program_scene"), "scene_items": items,
            "inputs": inputs, "filters": filters,
            "transition": {"name": data.get("current_transition"), "duration_ms": data.get("transition_duration")},
            "profile": glob.get("Basic", "Profile", fallback=None), "profile_params": params,
            "scene_collection": data.get("name"), "recording": False}
