"""The computer tool's action set (Anthropic computer_20250124, and computer_20251124's zoom), as data both the
tool and task checks use."""

COMPUTER_ACTIONS = (
    "screenshot", "cursor_position", "key", "type", "mouse_move",
    "left_click", "right_click", "middle_click", "double_click", "triple_click",
    "left_click_drag", "left_mouse_down", "left_mouse_up", "scroll", "hold_key", "wait",
    "zoom",  # computer_20251124: a region of the screen at full resolution (reads nothing, changes nothing)
)
