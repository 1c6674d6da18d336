"""Template 5: the command must run in the asked folder. A terminal command counts when it finished with exit code
0 and is the command itself, run there, or the last of one line whose other commands only change into the folder
(`cd scripts && bash build.sh`, `cd scripts; bash build.sh`). The folder is where the shell reported it was when
the line started (shell integration, read by the probe as the command starts), followed through each relative
`cd`."""

import os
import re
import shlex


def ran_in_folder(payload, params) -> bool:
    if payload.get("exit_code") != 0:
        return False
    parts = [p.strip() for p in re.split(r"&&|;", payload.get("command") or "")]
    if not parts or parts[-1].split() != params["cmd"].split():
        return False
    where = payload.get("start_cwd_rel")
    if where is None or os.path.isabs(where):
        return False
    for part in parts[:-1]:
        try:
            words = shlex.split(part)
        except ValueError:
            return False
        if len(words) != 2 or words[0] != "cd" or os.path.isabs(words[1]) or words[1].startswith("~"):
            return False
        where = os.path.join(where, words[1])
    return os.path.normpath(where or ".") == os.path.normpath(params["dir"])
