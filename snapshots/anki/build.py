"""Build Anki's user-data snapshots (an Anki2 base folder each) reproducibly.

    python snapshots/anki/build.py            # writes snapshots/anki/{base,tagged}

A base folder holds prefs21.db (one profile, no first-run dialogs, no update checks, no sync)
and 'User 1/collection.anki2'. The probe add-on is not part of the snapshot: the app config
places it after the restore, so a snapshot never carries stale probe code.
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROFILE = "User 1"
CREATED = 1_767_225_600  # fixed timestamps keep the snapshot stable across rebuilds

# Notes of the 'tagged' snapshot: (front, back, tags, deck)
TAGGED_NOTES = [
    ("Who wrote Hamlet?", "Shakespeare", ["literature"], "Default"),
    ("Who wrote Faust?", "Goethe", ["literature"], "Default"),
    ("Who wrote Don Quixote?", "Cervantes", ["literature"], "Default"),
    ("2 + 2", "4", ["math"], "Default"),
    ("Derivative of x^2", "2x", ["math"], "Default"),
    ("Capital of France", "Paris", ["geography"], "Default"),
    ("Capital of Japan", "Tokyo", ["geography"], "Default"),
    ("What is the boiling point of water?", "100 °C", ["science"], "Default"),
    ("What is H2O?", "Water", ["science"], "Default"),
]
UNUSED_TAGS = ["obsolete", "draft"]


def write_prefs(base: Path) -> None:
    meta = dict(ver=0, updates=True, created=CREATED, id=4242, lastMsg=0, suppressUpdate=False, firstRun=False,
                defaultLang="en_US", check_for_updates=False, check_for_addon_updates=False,
                last_addon_update_check=CREATED, last_loaded_profile_name=PROFILE)
    profile = dict(mainWindowGeom=None, mainWindowState=None, numBackups=50, lastOptimize=CREATED, searchHistory=[],
                   syncKey=None, syncMedia=True, autoSync=False, allowHTML=False, importMode=1, lastColour="#00f",
                   stripHTML=True, deleteMedia=False)
    db = sqlite3.connect(base / "prefs21.db")
    db.execute("create table profiles (name text primary key collate nocase, data blob not null)")
    db.execute("insert into profiles values ('_global', ?)", (pickle.dumps(meta, protocol=4),))
    db.execute("insert into profiles values (?, ?)", (PROFILE, pickle.dumps(profile, protocol=4)))
    db.commit()
    db.close()


def build(name: str, notes: list, unused_tags: list[str]) -> Path:
    from anki.collection import Collection

    base = HERE / name
    shutil.rmtree(base, ignore_errors=True)
    (base / PROFILE).mkdir(parents=True)
    (base / "addons21").mkdir()
    write_prefs(base)
    col = Collection(str(base / PROFILE / "collection.anki2"))
    try:
        basic = col.models.by_name("Basic")
        for front, back, tags, deck in notes:
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, back
            note.tags = list(tags)
            col.add_note(note, col.decks.id(deck, create=True))
        if unused_tags:
            # a tag stays in the tag list after its last note lets go of it: that is an "unused tag"
            holder = col.new_note(basic)
            holder["Front"], holder["Back"] = "temporary", "temporary"
            holder.tags = list(unused_tags)
            col.add_note(holder, 1)
            col.remove_notes([holder.id])
    finally:
        col.close(downgrade=False)
    for junk in ("collection.anki2-wal", "collection.anki2-shm"):
        (base / PROFILE / junk).unlink(missing_ok=True)
    return base


def build_pictures() -> Path:
    """~/Pictures of the image task: a small drawn dog (deterministic bytes)."""
    from PIL import Image, ImageDraw

    folder = HERE / "pictures"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    img = Image.new("RGB", (160, 120), "white")
    d = ImageDraw.Draw(img)
    d.ellipse((40, 40, 120, 90), fill="saddlebrown")          # body
    d.ellipse((100, 20, 140, 60), fill="saddlebrown")         # head
    d.polygon([(104, 24), (96, 6), (114, 20)], fill="sienna")  # ear
    for x in (50, 70, 95, 110):
        d.rectangle((x, 85, x + 8, 110), fill="saddlebrown")  # legs
    d.line((40, 55, 20, 35), fill="saddlebrown", width=5)      # tail
    d.ellipse((124, 32, 130, 38), fill="black")                # eye
    img.save(folder / "dog.png", optimize=False, compress_level=9)
    return folder


def main() -> None:
    built = [build("base", [], []), build("tagged", TAGGED_NOTES, UNUSED_TAGS), build_pictures()]
    for b in built:
        print(f"built {b.relative_to(HERE.parent.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
