"""One python-xlib connection to an X display, with tables of its own.

python-xlib keeps the error, event and extension-opcode tables on the Display *class*, and every
connection that loads an extension writes that extension's codes there. Codes differ between servers
(Xvfb here, Xvnc in a container), so one connection that loaded RandR on Xvfb makes another, on Xvnc,
parse an unrelated error as a RandR one (seen as `BadRRModeError ... no attribute 'sequence_number'`).
A connection from here loads no extension and starts from the core protocol's tables alone.
"""

from __future__ import annotations


def connect(display: str):
    from Xlib import display as xdisplay
    from Xlib import error, ext
    from Xlib.protocol import event

    ext.__extensions__ = []  # load none at connect; a caller adds what it uses to its own tables
    d = xdisplay.Display(display)
    pd = d.display
    pd.error_classes = dict(error.xerror_class)
    pd.event_classes = dict(event.event_class)
    pd.extension_major_opcodes = {}
    return d
