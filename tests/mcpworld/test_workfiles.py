"""The work folders' files as part of the state: each read as its format is read."""

from PIL import Image
from pypdf import PdfWriter

from mcpworld.sources.workfiles import read_work_files


def test_files_by_path_with_what_they_hold(tmp_path):
    home = tmp_path / "home"
    docs = home / "Documents"
    (docs / "maps").mkdir(parents=True)
    Image.new("RGB", (64, 32)).save(docs / "maps" / "out.png")
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_blank_page(width=595, height=842)
    with open(docs / "layout.pdf", "wb") as f:
        writer.write(f)
    (docs / "notes.txt").write_text("hello")
    (docs / "model.fcstd").write_bytes(b"PK...")
    (docs / "model.FCBak").write_bytes(b"old")
    seen = []

    def read_file(path):
        seen.append(path)
        return {"objects": 3} if path.endswith(".fcstd") else None

    files = {f["path"]: f for f in read_work_files([docs, home / "Missing"], home, ["*.FCBak"], read_file)}
    assert set(files) == {"Documents/maps/", "Documents/maps/out.png", "Documents/layout.pdf",
                          "Documents/notes.txt", "Documents/model.fcstd"}
    assert files["Documents/maps/out.png"]["image"] == {"format": "PNG", "width": 64, "height": 32, "mode": "RGB"}
    assert files["Documents/layout.pdf"]["pdf"]["pages"] == 2
    assert files["Documents/notes.txt"]["text"] == "hello" and files["Documents/notes.txt"]["size"] == 5
    assert files["Documents/model.fcstd"]["content"] == {"objects": 3}
    assert len(files["Documents/notes.txt"]["sha256"]) == 64


def test_a_file_that_does_not_parse_says_so(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "broken.png").write_bytes(b"not a png")
    [item] = read_work_files([tmp_path / "d"], tmp_path)
    assert item["path"] == "d/broken.png" and "error" in item and item["size"] == 9
