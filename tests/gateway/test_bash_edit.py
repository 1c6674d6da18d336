"""The bash and edit tools inside a real environment, local and in a container."""

import asyncio

from gateway.tools.bash import BashTool
from gateway.tools.edit import EditTool


async def test_bash_session_persists_and_reports_errors(any_env):
    bash = BashTool(any_env, timeout=5)
    try:
        r = await bash.call("bash", {"command": "cd /tmp && export X=42 && echo $HOME"})
        assert r.texts[0].strip() == any_env.home
        r = await bash.call("bash", {"command": "pwd; echo $X; echo oops >&2; false"})
        text = r.texts[0]
        assert "/tmp\n42" in text and "[stderr]\noops" in text and "[exit code 1]" in text
        assert not r.is_error
        r = await bash.call("bash", {"command": "printf 'no newline'"})
        assert r.texts[0] == "no newline"
        r = await bash.call("bash", {"command": "echo $DISPLAY"})
        assert r.texts[0].strip() == any_env.base_env()["DISPLAY"]
    finally:
        await bash.close()


async def test_editor_and_bash_share_the_environments_tmp(any_env):
    """One /tmp for all the agent's commands: a file the editor writes there is there for bash, and after."""
    bash, edit = BashTool(any_env, timeout=5), EditTool(any_env)
    try:
        r = await edit.call("str_replace_based_edit_tool", {"command": "create", "path": "/tmp/shared.txt",
                                                            "file_text": "from the editor"})
        assert not r.is_error, r.texts
        r = await bash.call("bash", {"command": "cat /tmp/shared.txt; echo ' and bash' >> /tmp/shared.txt"})
        assert r.texts[0].strip() == "from the editor"
        r = await edit.call("str_replace_based_edit_tool", {"command": "view", "path": "/tmp/shared.txt"})
        assert "from the editor and bash" in r.texts[0]
    finally:
        await bash.close()


async def test_bash_timeout_restarts_the_shell(any_env):
    bash = BashTool(any_env, timeout=1)
    try:
        r = await bash.call("bash", {"command": "export Y=1; sleep 30"})
        assert r.is_error and "restarted" in r.texts[0]
        r = await bash.call("bash", {"command": "echo ${Y:-unset}"})
        assert r.texts[0].strip() == "unset"
    finally:
        await bash.close()


async def test_bash_truncates_long_output_with_a_note(any_env):
    bash = BashTool(any_env)
    try:
        r = await bash.call("bash", {"command": "head -c 50000 /dev/zero | tr '\\0' 'x'; echo"})
        assert "[output truncated: " in r.texts[0] and len(r.texts[0]) < 17000
        assert (await bash.call("bash", {})).is_error
        assert (await bash.call("bash", {"command": "ls", "bogus": 1})).is_error
    finally:
        await bash.close()


async def test_edit_tool_commands(any_env):
    edit = EditTool(any_env)
    path = f"{any_env.home}/notes/a.txt"
    r = await edit.call("str_replace_based_edit_tool", {"command": "create", "path": path, "file_text": "one\ntwo\nthree"})
    assert not r.is_error
    r = await edit.call("str_replace_based_edit_tool", {"command": "view", "path": path, "view_range": [2, 3]})
    assert r.texts[0] == "     2\ttwo\n     3\tthree"
    r = await edit.call("str_replace_based_edit_tool", {"command": "str_replace", "path": path, "old_str": "two", "new_str": "2"})
    assert not r.is_error
    r = await edit.call("str_replace_based_edit_tool", {"command": "str_replace", "path": path, "old_str": "nope", "new_str": "x"})
    assert r.is_error and "0 times" in r.texts[0]
    r = await edit.call("str_replace_based_edit_tool", {"command": "insert", "path": path, "insert_line": 0, "insert_text": "zero"})
    assert not r.is_error
    with open(any_env.host_path(path)) as f:
        assert f.read() == "zero\none\n2\nthree"
    await edit.call("str_replace_based_edit_tool", {"command": "undo_edit", "path": path})
    await edit.call("str_replace_based_edit_tool", {"command": "undo_edit", "path": path})
    with open(any_env.host_path(path)) as f:
        assert f.read() == "one\ntwo\nthree"
    r = await edit.call("str_replace_based_edit_tool", {"command": "undo_edit", "path": path})
    assert r.is_error
    r = await edit.call("str_replace_based_edit_tool", {"command": "view", "path": f"{any_env.home}/notes"})
    assert path in r.texts[0]
    r = await edit.call("str_replace_based_edit_tool", {"command": "view", "path": "relative.txt"})
    assert r.is_error and "absolute" in r.texts[0]
    r = await edit.call("str_replace_based_edit_tool", {"command": "view", "path": path, "view_range": [5, 9]})
    assert r.is_error
    await asyncio.sleep(0)


async def test_commands_reading_stdin_do_not_hang_the_shell(any_env):
    bash = BashTool(any_env, timeout=5)
    try:
        r = await bash.call("bash", {"command": "cat; echo after"})
        assert r.texts[0].strip() == "after"
        assert (await bash.call("bash", {"command": "echo next"})).texts[0].strip() == "next"
    finally:
        await bash.close()
