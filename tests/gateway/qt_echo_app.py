"""A tiny real X app for the computer tool's tests: reports typed text, keys and clicks on stdout.

A press in the bottom strip (y >= BUSY_Y) is handled as a busy app handles one: half a second late, and
then with the keyboard's modifiers as they are at that moment, before it draws its answer."""

import sys
import time

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QGuiApplication
from PyQt6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget

BUSY_Y = 700


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
        if p.y() >= BUSY_Y:
            time.sleep(0.5)
            held = QGuiApplication.queryKeyboardModifiers() & Qt.KeyboardModifier.ControlModifier
            print(f"busy:{'ctrl' if held else 'none'}", flush=True)
            self.setStyleSheet("background: #c04040" if "c04040" not in self.styleSheet() else "")

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
