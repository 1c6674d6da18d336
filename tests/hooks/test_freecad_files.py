"""FreeCAD's state query reads the documents FreeCAD saved: what a real FCStd holds, and nothing outside the
environment's home (in a container the app's path names a host file when it is not mapped)."""

import shutil
from pathlib import Path
from types import SimpleNamespace

from mcpworld.config.modules import load_function
from mcpworld.paths import ROOT

STATE_QUERY = ROOT / "apps" / "freecad" / "state_query.py"
read_on_host = load_function(STATE_QUERY, "read_on_host", STATE_QUERY, "module")
BRACKET = ROOT / "snapshots" / "freecad" / "documents" / "models" / "bracket.FCStd"


def ctx(home: Path, env_home: str = "/home/agent"):
    """What the query gets in a container run: the environment's home mapped to `home` on the host."""
    def host_path(p: str) -> str:
        return str(home) + p[len(env_home):] if p == env_home or p.startswith(env_home + "/") else p
    return SimpleNamespace(values=SimpleNamespace(home=str(home)), host_path=host_path)


def test_a_saved_document_is_read_through_the_mapped_path(tmp_path):
    (tmp_path / "Documents").mkdir()
    shutil.copy(BRACKET, tmp_path / "Documents" / "bracket.FCStd")
    got = read_on_host(ctx(tmp_path), "/home/agent/Documents/bracket.FCStd")
    assert got["exists"] is True
    types = {o["type"] for o in got["objects"]}
    assert "PartDesign::Body" in types and len(got["objects"]) >= 2
    assert read_on_host(ctx(tmp_path), "/home/agent/Documents/none.FCStd") == {"exists": False}


def test_nothing_outside_the_home_is_read(tmp_path):
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    outside = tmp_path / "host_secret.FCStd"
    shutil.copy(BRACKET, outside)
    # a path the container does not map, and a link inside the home that points out of it
    assert read_on_host(ctx(home), str(outside))["exists"] is False
    (home / "Documents" / "link.FCStd").symlink_to(outside)
    got = read_on_host(ctx(home), "/home/agent/Documents/link.FCStd")
    assert got == {"exists": False, "error": "outside the home folder"}


def test_a_file_that_is_not_a_document_says_so(tmp_path):
    (tmp_path / "Documents").mkdir()
    (tmp_path / "Documents" / "fake.FCStd").write_text("not a zip")
    got = read_on_host(ctx(tmp_path), "/home/agent/Documents/fake.FCStd")
    assert got["exists"] is True and "not a FreeCAD document" in got["error"]
