"""The client of an in-app probe's bridge: one JSON request per tool call over loopback HTTP, with the
run's secret. A bridge error, or an app that does not answer, is a ToolError (an `isError` result)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError


class Bridge:
    def __init__(self, url: str, token: str, app: str, timeout: float = 40.0):
        self.url, self.token, self.app, self.timeout = url, token, app, timeout

    def call(self, method: str, params: dict[str, Any]) -> Any:
        body = json.dumps({"method": method, "params": {k: v for k, v in params.items() if v is not None}}).encode()
        req = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json",
                                                                   "Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                reply = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            try:
                reply = json.loads(e.read())
            except ValueError:
                raise ToolError(f"{self.app}'s bridge answered HTTP {e.code}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ToolError(f"{self.app} is not reachable ({e}); is it running?") from None
        if "error" in reply:
            raise ToolError(reply["error"])
        return reply.get("result")
