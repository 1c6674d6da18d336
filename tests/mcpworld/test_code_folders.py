"""The digest root's watch records for a folder moved into an app's code folder: the same package installed
twice gives the same digest, whatever the app writes at install in the keys it is told to skip; any other
content, file name or link target gives another."""

import json

from mcpworld.sources.code_folders import tree_digest

SKIPS = {"package.json": ["__metadata"]}


def package(folder, main="./run.js", installed=1, extra=None):
    (folder / "lib").mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": "x", "main": main, "__metadata": {"installedTimestamp": installed}}))
    (folder / "lib" / "run.js").write_text("exports.activate = () => 0;\n")
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    return str(folder)


def test_the_same_package_gives_the_same_digest_and_any_change_another(tmp_path):
    first = tree_digest(package(tmp_path / "a", installed=1), SKIPS)
    assert tree_digest(package(tmp_path / "b", installed=2), SKIPS) == first  # only the install's time differs
    assert tree_digest(package(tmp_path / "c", installed=2)) != tree_digest(package(tmp_path / "d", installed=1))
    assert tree_digest(package(tmp_path / "e", main="./evil.js"), SKIPS) != first
    assert tree_digest(package(tmp_path / "f", extra={"evil.js": "x"}), SKIPS) != first
    moved = package(tmp_path / "g")
    (tmp_path / "g" / "lib" / "run.js").rename(tmp_path / "g" / "lib" / "main.js")
    assert tree_digest(moved, SKIPS) != first
    linked = package(tmp_path / "h")
    (tmp_path / "h" / "lib" / "run.js").unlink()
    (tmp_path / "h" / "lib" / "run.js").symlink_to(tmp_path / "a" / "lib" / "run.js")
    assert tree_digest(linked, SKIPS) != first
