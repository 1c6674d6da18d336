"""VS Code's state query reads the workspace's git repositories as root: a repository config the agent wrote must
not make git run anything (core.fsmonitor, a filter driver, gpg.program under log.showSignature, an include)."""

import subprocess
from pathlib import Path

from mcpworld.config.modules import load_function

ROOT = Path(__file__).resolve().parents[2]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_hostile_repository_config_runs_nothing(tmp_path):
    ws, marks = tmp_path / "ws", tmp_path / "marks"
    ws.mkdir(), marks.mkdir()
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "config", "user.email", "a@b"), _git(ws, "config", "user.name", "A")
    (ws / "a.txt").write_text("one\n")
    (ws / ".gitattributes").write_text("*.txt filter=evil\n")
    _git(ws, "add", "-A"), _git(ws, "commit", "-qm", "first"), _git(ws, "tag", "v1")
    (ws / "a.txt").write_text("one\ntwo\n")
    gpg = tmp_path / "gpg.sh"
    gpg.write_text(f"#!/bin/sh\ntouch {marks}/gpg\n"), gpg.chmod(0o755)
    included = tmp_path / "included"
    included.write_text(f"[core]\n\tfsmonitor = touch {marks}/included; false\n")
    for key, value in (("core.fsmonitor", f"touch {marks}/fsmonitor; false"),
                       ("filter.evil.clean", f"touch {marks}/filter; cat"), ("log.showSignature", "true"),
                       ("gpg.program", str(gpg)), ("include.path", str(included))):
        _git(ws, "config", key, value)

    repository = load_function(ROOT / "apps" / "vscode" / "state_query.py", "repository", "test", "repository")
    repo = repository(ws, ".", str(tmp_path))

    assert sorted(p.name for p in marks.iterdir()) == []
    assert repo["branch"] == "main" and repo["message"] == "first"
    assert [t["name"] for t in repo["tags"]] == ["v1"]
    assert repo["changes"] == [{"path": "a.txt", "index": " ", "worktree": "M"}]
    assert repo["config"]["core.fsmonitor"].startswith("touch ")  # read as the file says, not followed


def test_a_git_folder_that_is_a_link_is_not_read(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(tmp_path, "init", "-q", str(tmp_path / "elsewhere"))
    (ws / ".git").symlink_to(tmp_path / "elsewhere" / ".git")
    repository = load_function(ROOT / "apps" / "vscode" / "state_query.py", "repository", "test", "repository")
    repo = repository(ws, ".", str(tmp_path))
    assert "not a folder of the workspace" in repo["tags"]["error"]
