"""The system prompt per mode (and with or without a shell), one definition every model agent shares, so
that agents compared on a task were told the same thing."""

from __future__ import annotations

from gateway.modes import Mode

_BASE = ("You operate a Linux desktop (XFCE on a virtual display) to complete the user's task in the "
         "application that is already open. Work step by step: observe, act, check the result. "
         "When the task is done, reply with a short summary and no tool call.")
PROMPTS = {
    (Mode.GUI, False): _BASE + " You can see the screen with screenshots and use the mouse and keyboard. You can also "
                            "run shell commands with the bash tool and edit files with the editor tool.",
    (Mode.HYBRID, False): _BASE + " You can use the mouse, keyboard and screenshots, the bash and editor tools, and the "
                               "application's own tools (MCP). Prefer an application tool where one fits; fall back to "
                               "the GUI where none does.",
    (Mode.MCP, False): _BASE + " You cannot see or click the screen. Use the application's own tools (MCP); you may also "
                            "run shell commands with the bash tool and edit files with the editor tool.",
    (Mode.GUI, True): _BASE + " You can see the screen with screenshots and use the mouse and keyboard. There is no shell.",
    (Mode.HYBRID, True): _BASE + " You can use the mouse, keyboard and screenshots, and the application's own tools (MCP). "
                              "There is no shell.",
    (Mode.MCP, True): _BASE + " You cannot see or click the screen and have no shell. Use only the application's own "
                           "tools (MCP).",
}


def system_prompt(mode: str, no_bash: bool) -> str:
    return PROMPTS[(mode, no_bash)]
