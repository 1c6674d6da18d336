"""OBS's state: the scene collection (scenes, their items, inputs, filters, transitions), the outputs, the
profile's settings, and the recordings and screenshots in the work folders (the core reads those, with
`read_file` below for OBS's video files).

Read over obs-websocket 5.1 while OBS runs; from the files OBS saved once it is gone (`running` false).

Records are keyed by what OBS keeps unique: a source's name (scenes, groups and inputs share one namespace;
OBS 29.0 has no source UUIDs, neither in libobs nor in obs-websocket 5.1), a filter's name within its source,
a scene item's id within its scene (OBS numbers items per scene and never reuses a number there; the same
source may sit twice in one scene, so a source's name does not identify an item).
"""

from __future__ import annotations

import configparser
import json
import logging
from pathlib import Path

logging.getLogger("obsws_python").setLevel(logging.CRITICAL)

# Profile parameters always read (their value as OBS uses it, its default when the profile file leaves it
# out), whether or not basic.ini holds them: those the tasks and the MCP server's conveniences change.
PROFILE_PARAMS = [("Output", "Mode"), ("SimpleOutput", "FilePath"), ("SimpleOutput", "RecFormat"),
                  ("SimpleOutput", "VBitrate"), ("SimpleOutput", "ABitrate"), ("SimpleOutput", "Preset"),
                  ("SimpleOutput", "RecRB"), ("SimpleOutput", "RecRBTime"), ("SimpleOutput", "RecQuality"),
                  ("AdvOut", "RecFilePath"), ("AdvOut", "RecFormat"),
                  ("Video", "BaseCX"), ("Video", "BaseCY"), ("Video", "OutputCX"), ("Video", "OutputCY"),
                  ("Video", "FPSType"), ("Video", "FPSInt")]
# what OBS assumes for those when basic.ini leaves them out (its config defaults, which obs-websocket reports):
# so that a state read from the files once OBS is gone compares with one read live
PROFILE_DEFAULTS = {("Output", "Mode"): "Simple", ("SimpleOutput", "VBitrate"): "2500",
                    ("SimpleOutput", "ABitrate"): "160", ("SimpleOutput", "Preset"): "veryfast",
                    ("SimpleOutput", "RecQuality"): "Stream", ("SimpleOutput", "RecRB"): "false",
                    ("SimpleOutput", "RecRBTime"): "20", ("SimpleOutput", "RecFormat"): "mkv",
                    ("AdvOut", "RecFormat"): "mkv", ("Video", "FPSType"): "0", ("Video", "FPSInt"): "30"}
# Any other key of the profile file counts when its value means something: not OBS's default, and, for a key
# OBS gives no default, not the value OBS's code reads for a missing one (false, 0, an empty string or
# binding list; a few combo boxes fall back to their first item). The Settings dialog writes every key of a
# page it saves with the value it shows, so that saving a page unchanged changes nothing here.
NO_DEFAULT_MEANS = {"", "0", "false", '{"bindings":[]}', '{\n    "bindings": []\n}'}
DIALOG_FALLBACKS = {("AdvOut", "RecSplitFileType"): "Time"}
# sections that are OBS's own bookkeeping, not settings: the browser docks' cookie store id, the profile's name
SKIP_KEYS = {("Panels", "CookieId"), ("General", "Name")}

THUMB = (16, 9)  # each scene as OBS renders it, this small: what a saved screenshot is compared with
VIDEO_SUFFIXES = {".mkv", ".mp4", ".mov", ".flv", ".ts", ".m3u8", ".webm"}


def query(ctx) -> dict:
    if ctx.app_alive:
        try:
            return {**_from_websocket(ctx), "running": True, "read_from": "websocket"}
        except Exception:  # OBS died after all, or stopped answering: read what it saved
            pass
    return {**_from_files(ctx), "running": False, "read_from": "files"}


# -- live, over obs-websocket -------------------------------------------------------------------------------
def _from_websocket(ctx) -> dict:
    import obsws_python as obsws
    from obsws_python.error import OBSSDKRequestError

    c = obsws.ReqClient(host=ctx.values.app_host, port=ctx.values.port("ws"), password=ctx.values.secret("ws"),
                        timeout=ctx.timeout)
    try:
        def req(name, data=None):
            return c.send(name, data, raw=True) or {}

        def opt(name, data=None):
            """A request OBS refuses for this source or output (no audio, no replay buffer): None."""
            try:
                return req(name, data)
            except OBSSDKRequestError:
                return None

        def filters(source: str) -> list[dict]:
            return [{"name": f["filterName"], "kind": f["filterKind"], "enabled": f["filterEnabled"],
                     "index": f["filterIndex"], "settings": f["filterSettings"]}
                    for f in req("GetSourceFilterList", {"sourceName": source})["filters"]]

        def items(reply: dict) -> list[dict]:
            return [{"id": i["sceneItemId"], "source": i["sourceName"], "index": i["sceneItemIndex"],
                     "visible": i["sceneItemEnabled"], "locked": i.get("sceneItemLocked", False),
                     "blend_mode": i.get("sceneItemBlendMode"), "transform": _transform(i.get("sceneItemTransform") or {})}
                    for i in reply["sceneItems"]]

        listed = req("GetSceneList")
        scenes = []
        for s in sorted(listed["scenes"], key=lambda s: -s["sceneIndex"]):  # obs-websocket lists them bottom up
            name = s["sceneName"]
            override = req("GetSceneSceneTransitionOverride", {"sceneName": name})
            scenes.append({"name": name, "index": len(scenes),
                           "transition_override": {"name": override.get("transitionName"),
                                                   "duration_ms": override.get("transitionDuration")},
                           "items": items(req("GetSceneItemList", {"sceneName": name})), "filters": filters(name)})
        groups = [{"name": g, "items": items(req("GetGroupSceneItemList", {"sceneName": g})), "filters": filters(g)}
                  for g in req("GetGroupList")["groups"]]
        inputs = []
        for i in req("GetInputList")["inputs"]:
            name = i["inputName"]
            record = {"name": name, "kind": i["inputKind"],
                      "settings": req("GetInputSettings", {"inputName": name})["inputSettings"]}
            mute = opt("GetInputMute", {"inputName": name})
            if mute is not None:  # a source with audio
                record["audio"] = {
                    "muted": mute["inputMuted"],
                    "volume_mul": round(req("GetInputVolume", {"inputName": name})["inputVolumeMul"], 4),
                    "balance": round(req("GetInputAudioBalance", {"inputName": name})["inputAudioBalance"], 4),
                    "sync_offset_ms": req("GetInputAudioSyncOffset", {"inputName": name})["inputAudioSyncOffset"],
                    "monitor_type": req("GetInputAudioMonitorType", {"inputName": name})["monitorType"],
                    "tracks": req("GetInputAudioTracks", {"inputName": name})["inputAudioTracks"]}
            record["filters"] = filters(name)
            inputs.append(record)
        current = req("GetCurrentSceneTransition")
        profiles = req("GetProfileList")
        collections = req("GetSceneCollectionList")
        service = req("GetStreamServiceSettings")
        record, stream = req("GetRecordStatus"), req("GetStreamStatus")
        replay, vcam = opt("GetReplayBufferStatus"), opt("GetVirtualCamStatus")
        thumbs = {s["name"]: _thumbnail(req("GetSourceScreenshot", {"sourceName": s["name"], "imageFormat": "png",
                                                                    "imageWidth": THUMB[0], "imageHeight": THUMB[1]}))
                  for s in scenes}
        return {
            "scenes": scenes, "groups": groups, "inputs": inputs,
            "program_scene": listed["currentProgramSceneName"],
            "preview_scene": listed.get("currentPreviewSceneName"),
            "studio_mode": req("GetStudioModeEnabled")["studioModeEnabled"],
            "transitions": [{"name": t["transitionName"], "kind": t["transitionKind"]}
                            for t in req("GetSceneTransitionList")["transitions"]],
            "transition": [{"role": "current", "name": current.get("transitionName"),
                            "duration_ms": current.get("transitionDuration"),
                            "settings": current.get("transitionSettings")}],
            "outputs": {
                "recording": {"active": record["outputActive"], "paused": record.get("outputPaused", False)},
                "streaming": {"active": stream["outputActive"],
                              "service": {"kind": service["streamServiceType"],
                                          "settings": service["streamServiceSettings"]}},
                "replay_buffer": {"active": bool(replay and replay.get("outputActive"))},
                "virtual_camera": {"active": bool(vcam and vcam.get("outputActive"))},
            },
            "profile": profiles["currentProfileName"], "profiles": profiles["profiles"],
            "profile_params": _profile_params(ctx, profiles["currentProfileName"], req),
            "scene_collection": collections["currentSceneCollectionName"],
            "scene_collections": collections["sceneCollections"],
            "saved_collections": _saved_collections(Path(ctx.values.path("config")),
                                                    collections["currentSceneCollectionName"]),
            "scene_thumbs": thumbs,
        }
    finally:
        c.disconnect()


def _transform(t: dict) -> dict:
    """Where a scene item sits: what set_scene_item_transform and the GUI's Edit Transform set. Its width and
    height (and its source's) are left out: they follow from its scale and its source's settings (a text's
    length), so they change when nothing about the item did."""
    out = {}
    for k in ("positionX", "positionY", "scaleX", "scaleY", "rotation", "boundsWidth", "boundsHeight"):
        out[k] = round(float(t.get(k, 1.0 if k.startswith("scale") else 0.0)), 3)
    for k in ("alignment", "boundsAlignment", "cropLeft", "cropTop", "cropRight", "cropBottom"):
        out[k] = int(t.get(k, 5 if k == "alignment" else 0))
    out["boundsType"] = t.get("boundsType", "OBS_BOUNDS_NONE")
    return out


def _thumbnail(reply: dict) -> list[list[int]]:
    """The RGB pixels of OBS's own small render of a scene (GetSourceScreenshot's base64 data URL)."""
    import base64
    import io

    from PIL import Image

    data = base64.b64decode(reply["imageData"].split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as im:
        return [list(px) for px in im.convert("RGB").resize(THUMB).getdata()]


# -- the profile ----------------------------------------------------------------------------------------------
def _ini(path: Path) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        pass
    return cp


def _profile_file(ctx, profile: str) -> Path | None:
    """The current profile's basic.ini: the profile folder whose [General] Name is the profile's name."""
    root = Path(ctx.values.path("config")) / "basic" / "profiles"
    for ini in sorted(root.glob("*/basic.ini")):
        if _ini(ini).get("General", "Name", fallback=None) == profile:
            return ini
    return None


def _meaningful(section: str, key: str, value, default) -> bool:
    if (section, key) in SKIP_KEYS or value is None:
        return False
    if default is not None:
        return value != default
    return value not in NO_DEFAULT_MEANS and value != DIALOG_FALLBACKS.get((section, key))


def _profile_params(ctx, profile: str, req) -> dict[str, str | None]:
    """Every profile parameter that means something, as "Section.Key" -> the value OBS uses."""
    ini = _profile_file(ctx, profile)
    in_file = [(s, k) for s in (_ini(ini).sections() if ini else []) for k in _ini(ini)[s]] if ini else []
    out: dict[str, str | None] = {}
    for section, key in dict.fromkeys([*PROFILE_PARAMS, *in_file]):
        got = req("GetProfileParameter", {"parameterCategory": section, "parameterName": key})
        value, default = got.get("parameterValue"), got.get("defaultParameterValue")
        if (section, key) in PROFILE_PARAMS or _meaningful(section, key, value, default):
            out[f"{section}.{key}"] = value if value is not None else default
    return dict(sorted(out.items()))


# -- from the files, once OBS is gone ------------------------------------------------------------------------
def _from_files(ctx) -> dict:
    config = Path(ctx.values.path("config"))
    glob = _ini(config / "global.ini")
    coll_file = glob.get("Basic", "SceneCollectionFile", fallback="Task")
    profile = glob.get("Basic", "Profile", fallback="Task")
    data = json.loads((config / "basic" / "scenes" / f"{coll_file}.json").read_text())
    sources = {s["name"]: s for s in data.get("sources", [])}
    group_names = [g["name"] for g in data.get("groups", [])]
    sources.update({g["name"]: g for g in data.get("groups", [])})

    def filters(src: dict) -> list[dict]:
        return [{"name": f["name"], "kind": f.get("versioned_id") or f["id"], "enabled": f.get("enabled", True),
                 "index": n, "settings": f.get("settings", {})} for n, f in enumerate(src.get("filters", []))]

    def items(src: dict) -> list[dict]:
        return [{"id": i.get("id"), "source": i["name"], "index": n, "visible": i.get("visible", True),
                 "locked": i.get("locked", False), "blend_mode": _BLEND.get(i.get("blend_type", "normal")),
                 "transform": _file_transform(i)} for n, i in enumerate(src.get("settings", {}).get("items", []))]

    scenes = [{"name": s["name"], "index": n, "items": items(sources.get(s["name"], {})),
               "filters": filters(sources.get(s["name"], {}))} for n, s in enumerate(data.get("scene_order", []))]
    inputs = [{"name": n, "kind": s.get("versioned_id") or s["id"], "settings": s.get("settings", {}),
               "filters": filters(s)} for n, s in sources.items() if s["id"] not in ("scene", "group")]
    prof_ini = _profile_file(ctx, profile)
    prof = _ini(prof_ini) if prof_ini else _ini(Path("/nonexistent"))
    params = {f"{c}.{k}": prof.get(c, k, fallback=PROFILE_DEFAULTS.get((c, k))) for c, k in PROFILE_PARAMS}
    params.update({f"{s}.{k}": v for s in prof.sections() for k, v in prof[s].items()
                   if (s, k) not in PROFILE_PARAMS and _meaningful(s, k, v, None)})
    return {"scenes": scenes, "groups": [{"name": g, "items": items(sources[g]), "filters": filters(sources[g])}
                                         for g in group_names],
            "inputs": inputs, "program_scene": data.get("current_program_scene"),
            "transition": [{"role": "current", "name": data.get("current_transition"),
                            "duration_ms": data.get("transition_duration")}],
            "profile": profile, "profile_params": dict(sorted(params.items())),
            "scene_collection": data.get("name"),
            "saved_collections": _saved_collections(config, data.get("name")),
            "outputs": {k: {"active": False} for k in ("recording", "streaming", "replay_buffer", "virtual_camera")}}


def _saved_collections(config: Path, current: str | None) -> list[dict]:
    """The scene collections other than the current one, as OBS last saved them (a switch saves the one left):
    their scenes in order with their items' sources, and their sources by name and kind."""
    out = []
    for f in sorted((config / "basic" / "scenes").glob("*.json")):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not data.get("name") or data["name"] == current:
            continue
        sources = {s["name"]: s for s in data.get("sources", []) + data.get("groups", [])}
        out.append({"name": data["name"],
                    "scenes": [{"name": s["name"], "items": [i["name"] for i in sources.get(s["name"], {})
                                                              .get("settings", {}).get("items", [])]}
                               for s in data.get("scene_order", [])],
                    "sources": sorted(f"{n} ({s.get('versioned_id') or s['id']})" for n, s in sources.items()
                                      if s["id"] != "scene")})
    return out


_BLEND = {"normal": "OBS_BLEND_NORMAL", "additive": "OBS_BLEND_ADDITIVE", "subtract": "OBS_BLEND_SUBTRACT",
          "screen": "OBS_BLEND_SCREEN", "multiply": "OBS_BLEND_MULTIPLY", "lighten": "OBS_BLEND_LIGHTEN",
          "darken": "OBS_BLEND_DARKEN"}


def _file_transform(i: dict) -> dict:
    pos, scale, bounds = i.get("pos") or {}, i.get("scale") or {}, i.get("bounds") or {}
    return _transform({"positionX": pos.get("x", 0.0), "positionY": pos.get("y", 0.0),
                       "scaleX": scale.get("x", 1.0), "scaleY": scale.get("y", 1.0), "rotation": i.get("rot", 0.0),
                       "alignment": i.get("align", 5), "boundsAlignment": i.get("bounds_align", 0),
                       "boundsWidth": bounds.get("x", 0.0), "boundsHeight": bounds.get("y", 0.0),
                       "boundsType": _BOUNDS[i.get("bounds_type", 0)] if i.get("bounds_type", 0) < len(_BOUNDS) else None,
                       "cropLeft": i.get("crop_left", 0), "cropTop": i.get("crop_top", 0),
                       "cropRight": i.get("crop_right", 0), "cropBottom": i.get("crop_bottom", 0)})


_BOUNDS = ["OBS_BOUNDS_NONE", "OBS_BOUNDS_STRETCH", "OBS_BOUNDS_SCALE_INNER", "OBS_BOUNDS_SCALE_OUTER",
           "OBS_BOUNDS_SCALE_TO_WIDTH", "OBS_BOUNDS_SCALE_TO_HEIGHT", "OBS_BOUNDS_MAX_ONLY"]


# -- OBS's own file formats in the work folders ---------------------------------------------------------------
def read_file(path: str) -> dict | None:
    """A video file OBS writes (a recording, a replay): its container, read from the file's own header, and for
    an MP4 whether it was finished (its index, the moov box, is written when the recording stops)."""
    p = Path(path)
    if p.suffix.lower() not in VIDEO_SUFFIXES:
        return None
    with p.open("rb") as f:
        head = f.read(4096)
    if head[:4] == b"\x1a\x45\xdf\xa3":
        doc = b"webm" if b"webm" in head[:64] else b"matroska" if b"matroska" in head[:64] else None
        return {"container": doc.decode() if doc else "ebml"}
    if head[4:8] == b"ftyp":
        return {"container": "mp4", "brand": head[8:12].decode("latin-1"), "finished": _mp4_has(p, b"moov")}
    if head[:3] == b"FLV":
        return {"container": "flv"}
    if head[:1] == b"\x47" and len(head) > 188 and head[188:189] == b"\x47":
        return {"container": "mpegts"}
    return {"container": None}


def _mp4_has(path: Path, box: bytes) -> bool:
    """Whether an MP4's top level holds a box of this type (walking the box headers, not the data)."""
    size_total = path.stat().st_size
    with path.open("rb") as f:
        pos = 0
        while pos + 8 <= size_total:
            f.seek(pos)
            header = f.read(16)
            size, kind = int.from_bytes(header[:4], "big"), header[4:8]
            if kind == box:
                return True
            if size == 1 and len(header) >= 16:
                size = int.from_bytes(header[8:16], "big")
            elif size == 0:
                return False
            if size < 8:
                return False
            pos += size
    return False
