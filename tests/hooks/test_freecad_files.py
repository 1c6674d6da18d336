"""FreeCAD's saved documents as the state's work files: what a real FCStd holds (read by the app's
read_file, as FreeCAD reads it: Document.xml), and nothing outside the home followed."""

import shutil
from pathlib import Path

from mcpworld.config.modules import load_function
from mcpworld.paths import ROOT
from mcpworld.sources.workfiles import read_work_files

STATE_QUERY = ROOT / "apps" / "freecad" / "state_query.py"
read_file = load_function(STATE_QUERY, "read_file", STATE_QUERY, "module")
BRACKET = ROOT / "snapshots" / "freecad" / "documents" / "models" / "bracket.FCStd"


def files(home: Path) -> dict[str, dict]:
    return {f["path"]: f for f in read_work_files([home / "Documents"], home, read_file=read_file)}


def test_a_saved_document_is_read_as_freecad_holds_it(tmp_path):
    (tmp_path / "Documents").mkdir()
    shutil.copy(BRACKET, tmp_path / "Documents" / "bracket.FCStd")
    got = files(tmp_path)["Documents/bracket.FCStd"]
    types = {o["type"] for o in got["content"]["objects"]}
    assert "PartDesign::Body" in types and "PartDesign::AdditiveBox" in types
    assert read_file(str(tmp_path / "Documents" / "notes.txt")) is None  # not FreeCAD's: the core reads it


def test_a_link_out_of_the_home_is_not_followed(tmp_path):
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    outside = tmp_path / "host_secret.FCStd"
    shutil.copy(BRACKET, outside)
    (home / "Documents" / "link.FCStd").symlink_to(outside)
    got = files(home)["Documents/link.FCStd"]
    assert got["kind"] == "link" and "content" not in got and "sha256" not in got


def test_a_file_that_is_not_a_document_says_so(tmp_path):
    (tmp_path / "Documents").mkdir()
    (tmp_path / "Documents" / "fake.FCStd").write_text("not a zip")
    got = files(tmp_path)["Documents/fake.FCStd"]
    assert "not a FreeCAD document" in got["content"]["error"]
