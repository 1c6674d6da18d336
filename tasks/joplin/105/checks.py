"""Task 105: Project plan links exactly one attachment, and it is the PDF from ~/Documents (its bytes), stored as a
resource of the end state."""

import hashlib
from pathlib import Path

PDF = Path(__file__).resolve().parents[3] / "snapshots" / "joplin" / "documents" / "invoice.pdf"
PROJECT_PLAN = "a00f8c54097b44c6ba2cf68cc962c654"


def links_the_new_pdf(events, state, params) -> bool:
    if not state:
        return False
    want = hashlib.sha256(PDF.read_bytes()).hexdigest()
    pdfs = {r["id"] for r in state.get("resources", []) if r.get("sha256") == want and r.get("mime") == "application/pdf"}
    note = next((n for n in state.get("notes", []) if n["id"] == PROJECT_PLAN), None)
    return note is not None and len(note["resources"]) == 1 and note["resources"][0] in pdfs
