"""Task 92: a Hotkeys binding written by Settings > Apply/OK is the requested key combination.

The config_set payload's value is the binding JSON OBS stores in the profile, e.g.
{"bindings":[{"control":true,"key":"OBS_KEY_R","shift":true}]}.
"""

import json

MODIFIERS = {"ctrl": "control", "control": "control", "shift": "shift", "alt": "alt",
             "super": "command", "meta": "command", "cmd": "command", "win": "command"}


def _wanted(hotkey: str) -> tuple[str, set[str]]:
    parts = [p.strip().lower() for p in hotkey.split("+") if p.strip()]
    return "OBS_KEY_" + parts[-1].upper(), {MODIFIERS[p] for p in parts[:-1]}


def binds_the_hotkey(payload, params) -> bool:
    try:
        data = json.loads(payload.get("value") or "")
    except (TypeError, ValueError):
        return False
    key, mods = _wanted(str(params["hotkey"]))
    for b in (data or {}).get("bindings", []):
        have = {m for m in ("control", "shift", "alt", "command") if b.get(m)}
        if b.get("key") == key and have == mods:
            return True
    return False
