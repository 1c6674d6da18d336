"""A connection from gateway.xconn parses errors with its own server's codes, whatever other connections
in the process loaded (python-xlib writes extension codes into tables on the Display class)."""

import pytest
from Xlib import display as xdisplay
from Xlib import error
from Xlib.ext import randr
from Xlib.protocol import display as protocol_display

from gateway.xconn import connect
from mcpworld.envs.local import LocalEnvironment


@pytest.fixture
async def bare():
    env = LocalEnvironment(window_manager=False)
    await env.open()
    yield env
    await env.close()


async def test_a_connection_ignores_extension_codes_another_connection_left_on_the_class(bare):
    other = xdisplay.Display(bare.display)  # a plain connection, as another library opens one
    info = other.query_extension(randr.extname)
    assert info is not None, "Xvfb has RandR: the test needs an extension with error codes"
    code = info.first_error + randr.BadRRMode
    shared = protocol_display.Display.error_classes
    # what loading RandR on another server does: its codes land in the class-wide table
    protocol_display.Display.add_extension_error(other.display, code, randr.BadRRModeError)
    try:
        assert shared.get(code) is randr.BadRRModeError  # the class table was written, as in python-xlib
        d = connect(bare.display)
        try:
            assert code not in d.display.error_classes
            with pytest.raises(error.BadWindow):  # a core error still parses as one
                d.create_resource_object("window", 0x3FFFFF).get_attributes()
        finally:
            d.close()
    finally:
        shared.pop(code, None)
        other.close()
