"""Write Joplin's snapshot: a profile made by the terminal client itself (its `batch` command, one process,
no network: geolocation off), and the files some tasks bring in. Run: python snapshots/joplin/build.py

    profile/              the client's profile (database.sqlite, settings.json), copied to {profile}
    documents/            ~/Documents: a Markdown file to import, a PDF to attach

A profile holds no absolute path, so it runs wherever it is restored. The Data API's port and token are
set per run by the probe, not here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from mcpworld.config.load import load_apps  # noqa: E402
from mcpworld.install import npm_prefix  # noqa: E402

SEED = """config trackLocation false
config sync.target 0
config revisionService.enabled false
config editor "vi -Z"
mkbook "Work"
mkbook "Personal"
mkbook "Archive"
use Personal
mknote "Shopping list"
set "Shopping list" body "- bread\\n- coffee"
mktodo "Pay bills"
done "Pay bills"
mknote "Old ideas"
mknote "Old draft"
rmnote -f "Old draft"
use Work
mknote "Meeting notes"
set "Meeting notes" body "Agenda: budget review"
mknote "Project plan"
set "Project plan" body "Milestones: design, build, launch."
mktodo "Buy milk"
mktodo "Call Alice"
tag add urgent "Meeting notes"
"""

PDF = b"""%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >> endobj
trailer << /Root 1 0 R >>
%%EOF
"""


def main() -> None:
    app = load_apps()["joplin"]
    prefix = npm_prefix(app)
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "profile"
        seed = Path(tmp) / "seed.txt"
        seed.write_text(SEED)
        subprocess.run([str(prefix / "bin" / "node"), str(prefix / "lib" / "node_modules" / "joplin" / "main.js"),
                        "--profile", str(profile), "--update-geolocation-disabled", "batch", str(seed)], check=True)
        out = HERE / "profile"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        shutil.copy2(profile / "database.sqlite", out / "database.sqlite")
        # the token Joplin drew for itself goes: the probe sets the run's own
        settings = json.loads((profile / "settings.json").read_text())
        settings.pop("api.token", None)
        (out / "settings.json").write_text(json.dumps(settings, indent=1) + "\n")
    docs = HERE / "documents"
    docs.mkdir(exist_ok=True)
    (docs / "packing-list.md").write_text("# Packing list\n\n- passport\n- charger\n- sunscreen\n")
    (docs / "invoice.pdf").write_bytes(PDF)


if __name__ == "__main__":
    main()
