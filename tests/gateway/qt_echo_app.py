"""A tiny real X app for the computer tool's tests: reports typed text, keys and clicks on stdout."""

import sys

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget


class Window(QWidget):
    def __init__(self):
        super().__init__()
        self.setWindowTitle("mcpworld-echo")
        self.edit = QLineEdit(self)
        self.edit.textChanged.connect(lambda t: print(f"text:{t}", flush=True))
        self.edit.returnPressed.connect(lambda: print("key:Return", flush=True))
        QVBoxLayout(self).addWidget(self.edit)
        self.setGeometry(0, 0, 1280, 800)

    def mousePressEvent(self, e):
        p = e.position()
        print(f"press:{e.button().name}:{int(p.x())},{int(p.y())}", flush=True)

    def mouseDoubleClickEvent(self, e):
        print("double", flush=True)

    def wheelEvent(self, e):
        print(f"wheel:{'up' if e.angleDelta().y() > 0 else 'down'}", flush=True)

    def keyPressEvent(self, e):
        if e.modifiers() & Qt.KeyboardModifier.ControlModifier:
            print(f"ctrl+{e.key()}", flush=True)


app = QApplication(sys.argv)
w = Window()
w.show()
w.edit.setFocus()
sys.exit(app.exec())
