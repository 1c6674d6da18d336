"""Renders qBittorrent.conf (stdin to stdout) with the WebUI password as qBittorrent keeps it: the line
`WebUI\\Password_PBKDF2=<password>` becomes PBKDF2-HMAC-SHA512 (100000 iterations, 16-byte salt, 64-byte
key) in QSettings' `"@ByteArray(<salt b64>:<key b64>)"` form (qBittorrent 4.5, src/base/utils/password.cpp)."""

import base64
import hashlib
import os
import re
import sys

KEY = "WebUI\\Password_PBKDF2="


def hashed(password: str) -> str:
    salt = os.urandom(16)
    key = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, 100_000, 64)
    return f'"@ByteArray({base64.b64encode(salt).decode()}:{base64.b64encode(key).decode()})"'


def render(text: str) -> str:
    return re.sub(r"^" + re.escape(KEY) + r"(.*)$", lambda m: KEY + hashed(m.group(1).strip()), text, flags=re.M)


if __name__ == "__main__":
    sys.stdout.write(render(sys.stdin.read()))
