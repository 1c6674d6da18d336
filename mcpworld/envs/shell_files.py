"""File access through ordinary commands (cat, mkdir, find) run inside an environment as one of its users:
a container's files, or the local agent's sandbox, where the runner's own file calls would see too much."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

Run = Callable[..., Awaitable[tuple[int, bytes, bytes]]]  # (argv, input=None) -> (code, stdout, stderr)


class ShellFiles:
    def __init__(self, run: Run):
        self._run = run

    async def read_text(self, path: str) -> str:
        code, out, err = await self._run(["cat", "--", path])
        if code != 0:
            raise OSError(err.decode(errors="replace").strip() or f"cannot read {path}")
        return out.decode()

    async def write_text(self, path: str, text: str) -> None:
        try:
            code, _, err = await self._run(["sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", path],
                                           input=text.encode())
        except ConnectionError:  # the command ended before taking the text: it could not open the file
            raise OSError(f"cannot write {path} (permission denied?)") from None
        if code != 0:
            raise OSError(err.decode(errors="replace").strip() or f"cannot write {path}")

    async def make_dir(self, path: str) -> None:
        code, _, err = await self._run(["mkdir", "-p", "--", path])
        if code != 0:
            raise OSError(err.decode(errors="replace").strip())

    async def path_kind(self, path: str) -> str | None:
        code, out, _ = await self._run(
            ["sh", "-c", 'if [ -d "$1" ]; then echo dir; elif [ -e "$1" ]; then echo file; fi', "sh", path])
        return out.decode().strip() or None

    async def list_dir(self, path: str, depth: int = 2) -> list[str]:
        code, out, err = await self._run(
            ["find", path, "-mindepth", "1", "-maxdepth", str(depth), "-not", "-path", "*/.*", "-printf", "%p\t%y\n"])
        if code != 0:
            raise OSError(err.decode(errors="replace").strip())
        rows = []
        for line in out.decode().splitlines():
            p, _, kind = line.rpartition("\t")
            rows.append(p + ("/" if kind == "d" else ""))
        return sorted(rows)
