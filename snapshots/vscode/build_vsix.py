"""Builds the extension packages (.vsix) in snapshots/vscode/downloads that templates 10 and 18 install
from disk (the extension gallery cannot be reached here). A .vsix is a zip: a manifest, a content-types
list and the extension folder. Fixed timestamps make the same bytes every time."""

import json
import pathlib
import zipfile

OUT = pathlib.Path(__file__).parent / "downloads"
STAMP = (2025, 3, 1, 10, 0, 0)

CONTENT_TYPES = ('<?xml version="1.0" encoding="utf-8"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                 'content-types"><Default Extension=".json" ContentType="application/json"/><Default Extension=".md" '
                 'ContentType="text/markdown"/><Default Extension=".vsixmanifest" ContentType="text/xml"/></Types>\n')


def manifest(pkg: dict) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011" xmlns:d="http://schemas.microsoft.com/developer/vsx-schema-design/2011">
  <Metadata>
    <Identity Language="en-US" Id="{pkg['name']}" Version="{pkg['version']}" Publisher="{pkg['publisher']}" />
    <DisplayName>{pkg['displayName']}</DisplayName>
    <Description xml:space="preserve">{pkg['description']}</Description>
    <Categories>{','.join(pkg['categories'])}</Categories>
    <Properties>
      <Property Id="Microsoft.VisualStudio.Code.Engine" Value="{pkg['engines']['vscode']}" />
      <Property Id="Microsoft.VisualStudio.Code.ExtensionKind" Value="ui,workspace" />
    </Properties>
  </Metadata>
  <Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>
  <Dependencies/>
  <Assets>
    <Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true" />
  </Assets>
</PackageManifest>
"""


def package(name: str, display: str, description: str, category: str, contributes: dict, version: str = "1.0.0") -> dict:
    return {"name": name, "displayName": display, "description": description, "version": version, "publisher": "cartdev",
            "engines": {"vscode": "^1.80.0"}, "categories": [category], "contributes": contributes}


def build(pkg: dict, files: dict[str, str]) -> None:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{pkg['name']}-{pkg['version']}.vsix"
    entries = {"[Content_Types].xml": CONTENT_TYPES, "extension.vsixmanifest": manifest(pkg),
               "extension/package.json": json.dumps(pkg, indent=2) + "\n",
               "extension/README.md": f"# {pkg['displayName']}\n\n{pkg['description']}\n",
               **{f"extension/{k}": v for k, v in files.items()}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in entries.items():
            z.writestr(zipfile.ZipInfo(name, STAMP), text)


snippets = {"Cart item": {"prefix": "cartadd", "body": ["cart.add(\"${1:name}\", ${2:price}, ${3:1});"],
                          "description": "Add an item to a cart"}}
build(package("cart-snippets", "Cart Snippets", "Snippets for the cart service.", "Snippets",
              {"snippets": [{"language": "javascript", "path": "./snippets.json"}]}),
      {"snippets.json": json.dumps(snippets, indent=2) + "\n"})
build(package("cart-snippets", "Cart Snippets", "Snippets for the cart service (old).", "Snippets",
              {"snippets": [{"language": "javascript", "path": "./snippets.json"}]}, version="0.9.0"),
      {"snippets.json": json.dumps(snippets, indent=2) + "\n"})

night = {"name": "Harbour Night", "type": "dark", "colors": {"editor.background": "#0f1b2a", "editor.foreground": "#d7e3f4",
         "activityBar.background": "#0b1520", "sideBar.background": "#0d1824", "statusBar.background": "#1d3b5c"},
         "tokenColors": [{"scope": "comment", "settings": {"foreground": "#6f8aa6", "fontStyle": "italic"}},
                         {"scope": "string", "settings": {"foreground": "#9fd4a3"}},
                         {"scope": "keyword", "settings": {"foreground": "#f2b872"}}]}
day = {**night, "name": "Harbour Day", "type": "light", "colors": {"editor.background": "#f4f8fc", "editor.foreground": "#1d2b3a"}}
build(package("harbour-theme", "Harbour Theme", "Two calm colour themes, Harbour Night and Harbour Day.", "Themes",
              {"themes": [{"label": "Harbour Night", "uiTheme": "vs-dark", "path": "./themes/night.json"},
                          {"label": "Harbour Day", "uiTheme": "vs", "path": "./themes/day.json"}]}),
      {"themes/night.json": json.dumps(night, indent=2) + "\n", "themes/day.json": json.dumps(day, indent=2) + "\n"})
