"""The in-app guard: the first act of an in-app Python probe, so that no code the agent types into the app runs.

It adds an audit hook (PEP 578: once added, nothing in the process can remove it) that sees every compile,
exec and unmarshal in the app's process, on any thread, before it happens:
- source compiled from a file is fine when the file lies under a trusted root (the app's and Python's
  installed code, the probe's folder: none of them the agent's to write) and the import system compiles it;
- source that is no file (a console's input line, a script editor's text) is fine only when a known code
  generator compiles it (dataclasses, namedtuple, typing, ...: stdlib code that builds functions from
  templates), or the app's own module that the probe names as trusted for it;
- a code object unmarshalled or rebuilt must come from the import system or installed code, and one the import
  system runs from a file under a trusted root (a planted .pyc compiles nothing); any other run of a code
  object passes, since every way to make one was judged as it was made.
Anything else is reported through `report(surface, code)` (the probe emits `code_run` and waits until the
evaluator has it) and refused: the hook raises, so the compile (or exec) never happens. `surface` names the
app's entry point when the caller is one the probe lists (Anki's Debug Console), else "python".
A trial with a `code_run` is never a pass (evaluator.verdict), whether the code ran or was refused.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading

WATCHED = frozenset({"compile", "exec", "marshal.loads", "marshal.load", "code.__new__"})
IMPORT_SYSTEM = ("<frozen importlib._bootstrap", "<frozen zipimport>")
# modules that compile source they build from templates or from installed code's annotations (a function's
# text, not anybody's input): dataclasses and namedtuple fields, typing's forward references, attrs classes,
# six's Python 2 shims (raise_from)
GENERATORS = ("dataclasses.py", "collections/__init__.py", "typing.py", "typing_extensions.py", "ast.py",
              "attr/_make.py", "/six.py")
MAX_CODE = 4000
# names through which Python code compiles source itself (a frame that uses none compiles only through C)
COMPILING = frozenset({"exec", "eval", "compile", "execfile", "__import__", "import_module", "run_path", "run_module",
                       "runsource", "runcode", "interact", "getattr", "__builtins__", "builtins", "vars", "globals"})


def compiles_itself(source: str) -> bool:
    """Whether Python source names a way to compile more source itself (COMPILING: exec, eval, getattr on the
    builtins, ...), as a name, an attribute or an import. `getattr(x, "Name", ...)` with a plain attribute name
    written out passes (FreeCAD's PartDesign copies a view's colours so): it reaches nothing a name could not.
    Called inside the hook, whose own compiles it ignores; source that does not parse compiles nothing (its
    compile fails on its own)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    plain_getattr = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str) and node.args[1].value.isidentifier()
                and not node.args[1].value.startswith("_") and node.args[1].value not in COMPILING):
            plain_getattr.add(id(node.func))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in plain_getattr:
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.update(node.name.split(".") + [node.asname or ""])
    return bool(COMPILING & names)


def _text(src):
    """A compile event's source as text: it carries a str's source as its bytes."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src).decode("utf-8", "replace")
    return src


class Refused(PermissionError):
    """What the agent's code gets instead of running."""


def python_roots() -> list[str]:
    """Where this Python keeps its own and its installed packages' code."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {os.path.join(sys.base_prefix, "lib"), os.path.join(sys.prefix, "lib")}
    return sorted(os.path.realpath(r) for r in roots if r)


class Guard:
    def __init__(self, report, trusted_roots: list[str], surfaces: dict[str, str] | None = None,
                 trusted_generators: tuple[str, ...] = (), from_c=None, own_lines: dict[str, frozenset[str]] | None = None,
                 generator_roots: list[str] = (), not_generators: tuple[str, ...] = (), nested_c_strings: bool = False):
        """report(surface, code): called once per refused compile or exec, before the hook refuses it.
        surfaces: a caller's file name ending -> the app's name for that entry point.
        trusted_generators: file name endings of the app's own modules that compile source they build.
        from_c(source, filename) -> the surface's name, or None to let it be: the rule for source an app's
        C or C++ code compiles (no Python frame calls it). Without one, the app's own code is trusted there
        (Anki, a Python program, compiles nothing from C); an app that compiles what a user types from C
        (a number field evaluated as Python, a layer action) names those.
        own_lines: a module's file name ending -> the exact lines it compiles itself (a console's start-up
        imports): those pass while that module is on the stack.
        generator_roots: folders of the app's own code whose every module compiles only source it builds (an
        app whose Python talks to its C++ in strings: a FreeCAD command's Gui.doCommand); not_generators: file
        name endings under them that compile what a user typed (an eval of a preference's text).
        nested_c_strings: code the app's C compiled as "<string>" (from_c let it pass) may compile more through
        the C functions it calls, when it calls no compiling builtin itself (FreeCAD: a command's string
        calls a C function that runs another command's string)."""
        self._report = report
        self._from_c = from_c
        self._own_lines = dict(own_lines or {})
        self._roots = tuple(os.path.join(os.path.realpath(r), "") for r in trusted_roots)
        self._surfaces = dict(surfaces or {})
        self._generators = GENERATORS + tuple(trusted_generators)
        self._generator_roots = tuple(os.path.join(os.path.realpath(r), "") for r in generator_roots)
        self._not_generators = tuple(not_generators)
        self._generator_file: dict[str, bool] = {}
        self._nested_c_strings = nested_c_strings
        self._inside = threading.local()
        self._trusted_file: dict[str, bool] = {}

    def install(self) -> None:
        sys.addaudithook(self._hook)

    # -- the rules -----------------------------------------------------------------------------------------
    def _under_roots(self, filename) -> bool:
        if not isinstance(filename, str) or not filename.startswith("/"):
            return False
        known = self._trusted_file.get(filename)
        if known is None:
            real = os.path.realpath(filename)
            known = self._trusted_file[filename] = real.startswith(self._roots) and os.path.isfile(real)
        return known

    def _generator(self, frame) -> bool:
        f = frame.f_code.co_filename
        if not self._under_roots(f):
            return False
        if f.endswith(self._generators):
            return True
        known = self._generator_file.get(f)
        if known is None:
            known = self._generator_file[f] = (os.path.realpath(f).startswith(self._generator_roots)
                                               and not f.endswith(self._not_generators))
        return known

    def _allowed(self, event: str, args: tuple, caller) -> bool:
        if caller is None:  # called from C with no Python frame: the app's embedding code
            return self._of_a_trusted_file(event, args) or self._c_surface(event, args) is None
        importing = caller.f_code.co_filename.startswith(IMPORT_SYSTEM)
        if event == "compile":
            filename = args[1] if len(args) > 1 else None
            if importing:
                return self._under_roots(filename) or str(filename).startswith("<frozen ")
            if args and args[0] is None and not self._under_roots(filename):
                # C running a file (PyRun_File compiles with no source) for Python code: a macro file behind
                # a command string (FreeCAD's Gui.SendMsgToActiveView("Run") from the Execute macro button)
                return False
            return (self._generator(caller) or self._own_line(caller, args[0] if args else None)
                    or self._nested_c_string(caller))
        if event == "exec":
            # a module's code the import system runs must come from a trusted file (a planted .pyc has no
            # compile event); any other code object was judged where it was made (compile, unmarshal, rebuilt)
            filename = getattr(args[0], "co_filename", "")
            return not importing or self._under_roots(filename) or filename.startswith("<frozen ")
        # code unmarshalled (pyc files) or rebuilt (code.replace): by the import system or installed code, which
        # is all that can be on the stack while no other code got past the two rules above
        return importing or self._under_roots(caller.f_code.co_filename)

    # -- the hook --------------------------------------------------------------------------------------------
    def _hook(self, event: str, args: tuple) -> None:
        if event not in WATCHED or getattr(self._inside, "on", False):
            return
        self._inside.on = True
        try:
            try:
                caller = sys._getframe(1)
            except ValueError:  # no Python frame below the hook: the app's C code called
                caller = None
            while caller is not None and caller.f_code.co_filename == __file__:
                caller = caller.f_back
            if self._allowed(event, args, caller):
                return
            surface = self._surface(caller, event, args)
            code = self._describe(event, args, caller)
            try:
                self._report(surface, code)
            except Exception:  # the refusal must not depend on the report getting through
                pass
        finally:
            self._inside.on = False
        raise Refused(f"mcpworld: code entered into the app is not run here ({surface})")

    def _nested_c_string(self, frame) -> bool:
        code = frame.f_code
        return self._nested_c_strings and code.co_filename == "<string>" and not COMPILING.intersection(code.co_names)

    def _own_line(self, frame, source) -> bool:
        source = _text(source)
        if not self._own_lines or not isinstance(source, str):
            return False
        while frame is not None:
            f = frame.f_code.co_filename
            for ending, lines in self._own_lines.items():
                if f.endswith(ending) and self._under_roots(f):
                    return source.strip() in lines
            frame = frame.f_back
        return False

    def _of_a_trusted_file(self, event: str, args: tuple) -> bool:
        """Source C compiles under the name of a trusted file that holds it: Python's own traceback printer
        parsing a line it shows (for the carets under an error), or the app compiling its own file; or C
        running a trusted file (PyRun_File compiles no source it was given: None). A text the agent edited
        under such a name (a script template changed in an editor) is not in the file."""
        if event != "compile" or len(args) < 2 or not self._under_roots(args[1]):
            return False
        if args[0] is None:
            return True
        src = _text(args[0])
        if not isinstance(src, str) or not src.strip():
            return False
        try:
            with open(args[1], encoding="utf-8", errors="replace") as f:
                return src.strip() in f.read()
        except OSError:
            return False

    def _c_surface(self, event: str, args: tuple) -> str | None:
        if self._from_c is None or event != "compile":  # the exec of what compiled from C was judged at its compile
            return None
        src = _text(args[0] if args else None)
        return self._from_c(src if isinstance(src, str) else None, args[1] if len(args) > 1 else None)

    def _surface(self, frame, event: str = "", args: tuple = ()) -> str:
        if frame is None or (event == "compile" and args and args[0] is None):  # C compiled it: C says what
            surface = self._c_surface(event, args)
            if surface or frame is None:
                return surface or "python"
        while frame is not None:
            f = frame.f_code.co_filename
            for ending, name in self._surfaces.items():
                if f.endswith(ending):
                    return name
            frame = frame.f_back
        return "python"

    @staticmethod
    def _describe(event: str, args: tuple, caller) -> str:
        by = "C" if caller is None else f"{caller.f_code.co_filename}:{caller.f_lineno}"
        if event == "compile" and args:
            src = _text(args[0])
            text = src if isinstance(src, str) else f"<{type(src).__name__}>"
            return f"{text[:MAX_CODE]}" + (f"\n# from {args[1]!r}" if len(args) > 1 else "") + f", called by {by}"
        if event == "exec" and args:
            c = args[0]
            return f"<code {getattr(c, 'co_name', '?')} from {getattr(c, 'co_filename', '?')}>, called by {by}"
        return f"<{event}>, called by {by}"


def install(report, trusted_roots: list[str], **kw) -> Guard:
    """Add the guard (Python's own roots are always trusted); returns it."""
    guard = Guard(report, [*python_roots(), *trusted_roots], **kw)
    guard.install()
    return guard
