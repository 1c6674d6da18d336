"""What a .blend file holds, read without Blender: its objects (type, transform, data, modifiers, mesh size),
materials, scenes and collections. The state query uses it for the files a task saves (`read_file`).

A .blend file (Blender 2.5 to 3.x) is a 12-byte header (`BLENDER`, pointer size, byte order, version), then
blocks: a code (`OB`, `ME`, `DATA`, `DNA1`, ...), a length, the address the block had in memory, the index of
its struct in the file's own SDNA, and a count. The SDNA block describes every struct (field names, types,
sizes), so fields are found by name as the file itself lays them out, not by offsets written here. Blender
3.x may compress the whole file with zstd: it is unpacked with the `zstd` program (Debian's `zstd`).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
MAX_BYTES = 256 * 1024 * 1024
# Object.type (DNA_object_types.h)
OBJECT_TYPES = {0: "EMPTY", 1: "MESH", 2: "CURVE", 3: "SURFACE", 4: "FONT", 5: "META", 10: "LIGHT", 11: "CAMERA",
                12: "SPEAKER", 13: "LIGHT_PROBE", 22: "LATTICE", 25: "ARMATURE", 26: "GPENCIL", 27: "CURVES",
                28: "POINTCLOUD", 29: "VOLUME"}


class BlendError(Exception):
    pass


def unpack(path: str | Path) -> tuple[bytes, str | None]:
    """The file's bytes, unpacked when compressed; and how it was compressed (None, "zstd", "gzip")."""
    raw = Path(path).read_bytes()
    if raw[:4] == ZSTD_MAGIC:
        exe = shutil.which("zstd")
        if exe is None:
            raise BlendError("a zstd-compressed .blend, and no zstd program to unpack it")
        out = subprocess.run([exe, "-dc", "--no-progress", str(path)], capture_output=True, timeout=60)
        if out.returncode != 0:
            raise BlendError(f"zstd: {out.stderr.decode(errors='replace').strip()[:200]}")
        return out.stdout[:MAX_BYTES], "zstd"
    if raw[:2] == GZIP_MAGIC:
        import gzip
        return gzip.decompress(raw)[:MAX_BYTES], "gzip"
    return raw, None


@dataclass
class Block:
    code: bytes
    addr: int
    sdna: int
    count: int
    start: int   # offset of the block's data in the file
    size: int


@dataclass
class Struct:
    name: str
    size: int
    fields: dict[str, tuple[int, str, str]]  # field name (bare) -> (offset, type, declared name)


class BlendFile:
    def __init__(self, data: bytes):
        if data[:7] != b"BLENDER" or len(data) < 12:
            raise BlendError("not a .blend file")
        self.data = data
        self.psize = 8 if data[7:8] == b"-" else 4
        self.end = "<" if data[8:9] == b"v" else ">"
        self.version = data[9:12].decode()
        self.blocks: list[Block] = []
        self.by_addr: dict[int, Block] = {}
        self.structs: list[Struct] = []
        self._read_blocks()

    def _read_blocks(self) -> None:
        pos, d, e = 12, self.data, self.end
        head = struct.Struct(e + "4si" + ("Q" if self.psize == 8 else "I") + "ii")
        while pos + head.size <= len(d):
            code, size, addr, sdna, count = head.unpack_from(d, pos)
            pos += head.size
            if code == b"ENDB":
                break
            block = Block(code, addr, sdna, count, pos, size)
            if code == b"DNA1":
                self._read_sdna(pos)
            else:
                self.blocks.append(block)
                self.by_addr[addr] = block
            pos += size
        if not self.structs:
            raise BlendError("no SDNA block")

    def _read_sdna(self, pos: int) -> None:
        d, e = self.data, self.end

        def words(at: int, n: int) -> tuple[list[str], int]:
            out = []
            for _ in range(n):
                stop = d.index(b"\0", at)
                out.append(d[at:stop].decode("latin-1"))
                at = stop + 1
            return out, (at + 3) & ~3

        assert d[pos:pos + 4] == b"SDNA"
        pos += 4
        assert d[pos:pos + 4] == b"NAME"
        (n,) = struct.unpack_from(e + "i", d, pos + 4)
        names, pos = words(pos + 8, n)
        assert d[pos:pos + 4] == b"TYPE"
        (n,) = struct.unpack_from(e + "i", d, pos + 4)
        types, pos = words(pos + 8, n)
        assert d[pos:pos + 4] == b"TLEN"
        lens = struct.unpack_from(e + f"{len(types)}h", d, pos + 4)
        pos = (pos + 4 + 2 * len(types) + 3) & ~3
        assert d[pos:pos + 4] == b"STRC"
        (n,) = struct.unpack_from(e + "i", d, pos + 4)
        pos += 8
        for _ in range(n):
            t, nf = struct.unpack_from(e + "hh", d, pos)
            pos += 4
            fields, off = {}, 0
            for _ in range(nf):
                ft, fn = struct.unpack_from(e + "hh", d, pos)
                pos += 4
                decl = names[fn]
                size = self.psize if ("*" in decl) else lens[ft]
                for dim in decl.replace("]", "").split("[")[1:]:
                    size *= int(dim)
                bare = decl.lstrip("*(").split("[")[0].split(")")[0]
                fields[bare] = (off, types[ft], decl)
                off += size
            self.structs.append(Struct(types[t], lens[t], fields))

    # -- reading fields --------------------------------------------------------------------------------
    def struct_of(self, block: Block) -> Struct:
        return self.structs[block.sdna]

    def field(self, block: Block, name: str, at: int = 0):
        """A field of the struct at `at` bytes into a block: a number, a pointer, a string or a float array."""
        st = self.struct_of(block)
        off, typ, decl = st.fields[name]
        pos = block.start + at + off
        d, e = self.data, self.end
        if "*" in decl:
            return struct.unpack_from(e + ("Q" if self.psize == 8 else "I"), d, pos)[0]
        dims = [int(x) for x in decl.replace("]", "").split("[")[1:]]
        if typ == "char" and dims:
            raw = d[pos:pos + dims[0]]
            return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
        fmt = {"float": "f", "double": "d", "int": "i", "short": "h", "char": "b", "uchar": "B", "ushort": "H",
               "uint": "I", "int64_t": "q", "uint64_t": "Q"}.get(typ)
        if fmt is None:
            raise BlendError(f"{st.name}.{name}: cannot read a {typ}")
        n = 1
        for x in dims:
            n *= x
        vals = struct.unpack_from(e + fmt * n, d, pos)
        return list(vals) if dims else vals[0]

    def id_name(self, block: Block) -> str:
        """The ID's name without its two-letter code ("OBCube" -> "Cube")."""
        return self.field_in(block, "ID", "name")[2:]

    def field_in(self, block: Block, sub: str, name: str):
        """A field of the struct `sub` that opens the block's struct (an ID opens every datablock)."""
        st = self.struct_of(block)
        first = next(iter(st.fields.items()))
        off, typ, _ = first[1]
        if typ != sub:
            raise BlendError(f"{st.name} does not start with {sub}")
        inner = next(s for s in self.structs if s.name == sub)
        off2, typ2, decl2 = inner.fields[name]
        fake = Block(block.code, block.addr, self.structs.index(inner), 1, block.start + off, inner.size)
        return self.field(fake, name)

    def ids(self, code: bytes) -> list[Block]:
        code = code.ljust(4, b"\0")
        return [b for b in self.blocks if b.code == code]

    def listbase(self, block: Block, name: str) -> list[Block]:
        """The blocks of a ListBase field, in order (each element is a block of its own)."""
        st = self.struct_of(block)
        off, typ, _ = st.fields[name]
        if typ != "ListBase":
            raise BlendError(f"{st.name}.{name} is not a ListBase")
        e = self.end + ("Q" if self.psize == 8 else "I")
        addr = struct.unpack_from(e, self.data, block.start + off)[0]
        out, seen = [], set()
        while addr and addr in self.by_addr and addr not in seen:
            seen.add(addr)
            item = self.by_addr[addr]
            out.append(item)
            addr = struct.unpack_from(e, self.data, item.start)[0]  # Link.next opens every list element
        return out


def _num(v: float) -> float:
    return round(float(v), 4) + 0.0


def summary(path: str | Path) -> dict:
    """The file's objects, materials, scenes and collections, as the state query shows a saved .blend."""
    data, compressed = unpack(path)
    bf = BlendFile(data)
    out: dict = {"format": "blend", "version": f"{bf.version[0]}.{bf.version[1:].lstrip('0') or '0'}",
                 "compressed": compressed}
    meshes = {}
    for b in bf.ids(b"ME"):
        meshes[b.addr] = {"vertices": bf.field(b, "totvert"), "faces": bf.field(b, "totpoly")}
    objects = []
    for b in bf.ids(b"OB"):
        o = {"name": bf.id_name(b), "type": OBJECT_TYPES.get(bf.field(b, "type"), str(bf.field(b, "type"))),
             "location": [_num(x) for x in bf.field(b, "loc")], "rotation": [_num(x) for x in bf.field(b, "rot")],
             "scale": [_num(x) for x in bf.field(b, "size")]}  # DNA's name for Object.scale
        data_addr = bf.field(b, "data")
        data_block = bf.by_addr.get(data_addr)
        o["data"] = bf.id_name(data_block) if data_block is not None else None
        if data_addr in meshes:
            o["mesh"] = meshes[data_addr]
        mods = []
        for m in bf.listbase(b, "modifiers"):
            name = bf.field_in(m, "ModifierData", "name")
            kind = bf.struct_of(m).name.removesuffix("ModifierData")
            mods.append({"name": name, "type": kind})
        o["modifiers"] = mods
        objects.append(o)
    out["objects"] = sorted(objects, key=lambda o: o["name"])
    for code, key in ((b"MA", "materials"), (b"SC", "scenes"), (b"GR", "collections")):
        out[key] = sorted(bf.id_name(b) for b in bf.ids(code))
    return out
