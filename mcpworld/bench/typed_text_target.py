"""The typing benchmark's target: Qt's own file dialog (as OBS's Import Profile opens it), whose file-name
field has a completer that loads folders in the background and selects in them while the user types. In
file mode (as OBS's Image File dialog) the completer offers the files of the folder too, in a popup that
shows as the typed name matches one. Behind it a window repaints ten times a second, as OBS's preview
does around its dialogs. F12 prints the field ("typed:<text>") and clears it. Run with PyQt6
(it comes with Anki's package): typed_text_target.py FOLDER [dir|file]."""

import os
import subprocess
import sys
import time


def preview() -> None:
    """A window behind the dialog that a process of its own repaints ten times a second, the same picture:
    as OBS's graphics thread draws its preview whatever the dialog's thread is doing."""
    from Xlib import display

    d = display.Display()
    s = d.screen()
    win = s.root.create_window(0, 0, s.width_in_pixels, s.height_in_pixels, 0, s.root_depth,
                               background_pixel=s.black_pixel)
    win.set_wm_name("mcpworld-typing-preview")
    win.map()
    gc = win.create_gc(foreground=s.white_pixel)
    parent = os.getppid()
    while os.getppid() == parent:  # the dialog's process is killed, not closed: end with it
        win.fill_rectangle(gc, 0, 0, s.width_in_pixels, s.height_in_pixels)
        d.sync()
        time.sleep(0.1)


if sys.argv[1:] == ["--preview"]:
    preview()

from PyQt6.QtGui import QKeySequence, QShortcut  # noqa: E402
from PyQt6.QtWidgets import QApplication, QFileDialog, QLineEdit  # noqa: E402

painter = subprocess.Popen([sys.executable, __file__, "--preview"])
time.sleep(1.0)  # mapped before the dialog, so the dialog stacks above it
app = QApplication(sys.argv)
dialog = QFileDialog(None, "mcpworld-typing", sys.argv[1])
dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
dialog.setFileMode(QFileDialog.FileMode.ExistingFile if sys.argv[2:] == ["file"] else QFileDialog.FileMode.Directory)
dialog.setGeometry(0, 0, 1000, 700)
dialog.show()
dialog.raise_()
dialog.activateWindow()
field = dialog.findChild(QLineEdit, "fileNameEdit")


def report():
    print("typed:" + field.text(), flush=True)
    field.clear()


QShortcut(QKeySequence("F12"), dialog, activated=report)
code = app.exec()
painter.kill()
sys.exit(code)
