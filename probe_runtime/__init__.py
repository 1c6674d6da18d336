"""The runtime every probe and hook shares: the authenticated websocket client in-app probes use
(client.py), the Frida bridge and its prelude (frida_bridge.py, frida/), and the export tracer behind
`mcpworld hooks trace` (trace.py). It depends only on the standard library, `websockets` and `frida`,
and never on mcpworld itself: it runs inside apps and containers. hooks/<app>/ holds only app hooks."""
