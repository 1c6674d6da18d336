"""The in-app guard (probe_runtime/guard.py) in a real Python process: installed code, stdlib code generators
and the import system run as before; source typed in (eval, exec, a console's compile), code imported from a
folder nobody trusts and a compiled module planted without its source are reported and refused before they run."""

import json
import py_compile
import subprocess
import sys
import textwrap

from mcpworld import paths

SCRIPT = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, REPO)
    from probe_runtime import guard
    seen = []
    guard.install(lambda surface, code: seen.append([surface, code]), [], surfaces={"code.py": "console"})
    out = {}
    # installed code, generators and imports: as before
    import dataclasses, collections, enum, asyncio, email.mime.text, decimal
    @dataclasses.dataclass
    class P:
        a: int = 1
    class E(enum.Enum):
        A = 1
    out["generated"] = [repr(P()), collections.namedtuple("T", "a b")(1, 2).b, E.A.value]

    def attempt(name, fn):
        try:
            fn()
            out[name] = "ran"
        except guard.Refused:
            out[name] = "refused"

    attempt("eval", lambda: eval("1 + 1"))
    attempt("exec", lambda: exec("import os"))
    attempt("compile", lambda: compile("x = 1", "/usr/lib/python3/dist-packages/forged.py", "exec"))
    import code
    attempt("console", lambda: code.InteractiveInterpreter().runsource("x = 1"))
    sys.path.insert(0, TMP)
    attempt("import", lambda: __import__("planted"))
    attempt("pyc", lambda: __import__("sourceless"))  # a compiled module without its source: no compile event
    out["seen"] = seen
    print(json.dumps(out))
''')


def test_the_guard_refuses_and_reports_code_nobody_shipped(tmp_path):
    (tmp_path / "planted.py").write_text("X = 1\n")
    (tmp_path / "sourceless.py").write_text("Y = 2\n")
    py_compile.compile(str(tmp_path / "sourceless.py"), cfile=str(tmp_path / "sourceless.pyc"))
    (tmp_path / "sourceless.py").unlink()
    script = f"REPO = {str(paths.ROOT)!r}\nTMP = {str(tmp_path)!r}\n" + SCRIPT
    # the script itself stands for the app's installed code: it lies under a trusted root only as a file
    # of its own, so it runs from a folder the guard trusts
    (tmp_path / "trusted").mkdir()
    main = tmp_path / "trusted" / "app.py"
    main.write_text(script.replace("guard.install(lambda surface, code: seen.append([surface, code]), []",
                                   f"guard.install(lambda surface, code: seen.append([surface, code]), [{str(main.parent)!r}]"))
    p = subprocess.run([sys.executable, str(main)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    assert out["generated"] == ["P(a=1)", 2, 1]
    assert {k: out[k] for k in ("eval", "exec", "compile", "console", "import", "pyc")} == dict.fromkeys(
        ("eval", "exec", "compile", "console", "import", "pyc"), "refused")
    surfaces = [s for s, _ in out["seen"]]
    assert surfaces.count("console") == 1 and len(surfaces) == 6, out["seen"]
    codes = "\n".join(c for _, c in out["seen"])
    assert "1 + 1" in codes and "import os" in codes and "planted.py" in codes


def test_a_string_from_c_that_names_a_way_to_compile_is_refused():
    """FreeCAD's rule for its C++'s command strings (compiled with no Python frame below): a string passes
    unless it names a way to compile more (exec, eval, getattr on the builtins, an import of runpy's run_path)."""
    from probe_runtime.guard import Guard, compiles_itself

    seen = []
    g = Guard(lambda surface, code: seen.append(surface), [],
              from_c=lambda src, filename: "command_string" if src and compiles_itself(src) else None)
    plain = ['App.newDocument("Unnamed")', 'Gui.runCommand("Std_Save", 0)',
             'App.ActiveDocument.getObject("Box").Label = "exec(open(\'x\').read())"',  # a label holding code: text
             "v = App.getDocument('U').getObject('Cylinder').ViewObject; v.ShapeColor = getattr(v, 'ShapeColor', None)"]
    hostile = ['exec(open("/home/u/x.py").read())', 'getattr(__builtins__, "ev" + "al")("1")',
               'from runpy import run_path as r', 'import builtins as b; b.eval("1")', "__import__('os')",
               "getattr(App, 'eval')('1')", "getattr(App, '__class__')", "g = getattr; g(App, 'x')"]
    assert all(g._allowed("compile", (s, "<string>", "exec"), None) for s in plain)
    assert not any(g._allowed("compile", (s, "<string>", "exec"), None) for s in hostile)


def test_a_command_string_may_run_strings_but_not_a_file():
    """FreeCAD's nested rule: a command string from C (no compiling name in it) may call C++ that compiles
    another command string (Std_Save's Gui.SendMsgToActiveView("Save")), but not C++ that runs a file
    (Gui.SendMsgToActiveView("Run"), the Execute macro button, PyRun_File of the agent's macro: source None)."""
    from probe_runtime.guard import Guard

    g = Guard(lambda surface, code: None, [], from_c=lambda src, filename: "macro" if src is None else None,
              nested_c_strings=True)
    ns = {}
    exec(compile("import sys\nframe = sys._getframe()", "<string>", "exec"), ns)  # a command string's frame
    frame = ns["frame"]
    assert g._allowed("compile", ('App.getDocument("U").save()', "<string>", "exec"), frame)
    assert not g._allowed("compile", (None, "/home/agent/x.FCMacro", "exec"), frame)
    assert g._surface(frame, "compile", (None, "/home/agent/x.FCMacro", "exec")) == "macro"
