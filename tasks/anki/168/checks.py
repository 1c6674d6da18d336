"""Task 168: the front shows the dog picture -- the exact file from ~/Pictures, stored in the media folder."""

import hashlib
import re
from pathlib import Path

DOG = Path(__file__).resolve().parents[3] / "snapshots" / "anki" / "pictures" / "dog.png"


def front_shows_the_dog(events, state, params) -> bool:
    if not state:
        return False
    want = hashlib.sha256(DOG.read_bytes()).hexdigest()
    stored = {m["name"] for m in state.get("media", []) if m["sha256"] == want}
    for note in state["notes"]:
        front = note["fields"].get("Front", "")
        srcs = re.findall(r'<img[^>]*\bsrc="([^"]+)"', front)
        if note["fields"].get("Back", "").strip() == "dog" and "what is this?" in front.lower() and stored & set(srcs):
            return True
    return False
