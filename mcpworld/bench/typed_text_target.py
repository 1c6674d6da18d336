"""The typing benchmark's target: Qt's own file dialog (as OBS's Import Profile opens it), whose file-name
field has a completer that loads folders in the background and selects in them while the user types. F12
prints the field ("typed:<text>") and clears it. Run with PyQt6 (it comes with Anki's package)."""

import sys

from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QApplication, QFileDialog, QLineEdit

app = QApplication(sys.argv)
dialog = QFileDialog(None, "mcpworld-typing", sys.argv[1])
dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
dialog.setFileMode(QFileDialog.FileMode.Directory)
dialog.setGeometry(0, 0, 1000, 700)
dialog.show()
field = dialog.findChild(QLineEdit, "fileNameEdit")


def report():
    print("typed:" + field.text(), flush=True)
    field.clear()


QShortcut(QKeySequence("F12"), dialog, activated=report)
sys.exit(app.exec())
