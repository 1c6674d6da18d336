"""Template 22 names no scope for the setting: the user's settings or the workspace's count, but not both (a
setting written at a second scope as well is one change too many, which the delta's optional counts cannot say)."""

KEY = "git.blame.editorDecoration.enabled"


def at_one_scope(events, state, params) -> bool:
    user = KEY in (state.get("user_settings") or {})
    workspace = any(f.get("path") == ".vscode/settings.json" and KEY in ((f.get("content") or {}).get("json") or {})
                    for f in state.get("files") or [])
    return user != workspace
