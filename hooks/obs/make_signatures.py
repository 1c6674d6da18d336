"""Build hooks/obs/signatures.json for `mcpworld hooks trace`: the parameter types of every function
libobs and the frontend API export, read from the headers of Debian's libobs-dev (the same 29.0.2
source as the obs-studio package), plus how to print each OBS handle type.

    apt-get download libobs-dev && dpkg -x libobs-dev_*.deb /tmp/libobs-dev
    python hooks/obs/make_signatures.py /tmp/libobs-dev/usr/include/obs
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).with_name("signatures.json")
DECL = re.compile(r"\bEXPORT\s+([^;{}()]*?)\b(\w+)\s*\(([^;{}]*?)\)\s*;", re.S)
# handle types printed by calling a getter that returns a C string: type -> [module, getter]
DECODERS = {
    "obs_source_t *": ["libobs.so.29", "obs_source_get_name"],
    "obs_output_t *": ["libobs.so.29", "obs_output_get_name"],
    "obs_encoder_t *": ["libobs.so.29", "obs_encoder_get_name"],
    "obs_service_t *": ["libobs.so.29", "obs_service_get_name"],
    "obs_data_t *": ["libobs.so.29", "obs_data_get_json"],
    "obs_scene_t *": ["libobs.so.29", "obs_scene_get_source", "obs_source_get_name"],
    "obs_sceneitem_t *": ["libobs.so.29", "obs_sceneitem_get_source", "obs_source_get_name"],
}


def normalize(param: str) -> list[str]:
    """'const char *name' -> ['char *', 'name']; an unnamed 'uint32_t' -> ['uint32_t', '']."""
    param = re.sub(r"\s+", " ", param.replace("const ", "")).strip()
    param = re.sub(r"\s*\*\s*", " *", param)
    m = re.fullmatch(r"(.*?)\s*(\**)(\w+)(\[\d*\])?", param)
    base, stars, name = (m.group(1), m.group(2), m.group(3)) if m else (param, "", "")
    if not base or base in ("enum", "struct") or name in ("int", "long", "char", "bool", "float", "double"):
        return [param, ""]  # unnamed
    return [f"{base} {stars}" if stars else base, name]


def split_params(params: str) -> list[str]:
    """Split on the commas between parameters, not those inside a function-pointer parameter."""
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


def main(include: Path) -> None:
    functions = {}
    for header in sorted(include.rglob("*.h")):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", header.read_text(errors="replace"), flags=re.S)
        for _ret, name, params in DECL.findall(text):
            if params.strip() in ("", "void"):
                types = []
            else:
                types = [normalize(p) for p in split_params(params)]
            functions[name] = types
    OUT.write_text(json.dumps({"decoders": DECODERS, "functions": dict(sorted(functions.items()))}, indent=0) + "\n")
    print(f"{len(functions)} functions -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
