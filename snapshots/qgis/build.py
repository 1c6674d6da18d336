"""Write QGIS's snapshots with QGIS's own Python (PyQGIS and GDAL from Debian, headless). Run:
python snapshots/qgis/build.py

    documents/gis/valley.gpkg      a GeoPackage (EPSG:4326) of an invented valley, four layers:
                                   towns (6 points: name, population), roads (4 lines: name, kind),
                                   lakes (2 polygons: name, depth_m), districts (4 polygons tiling the valley: name)
    documents/gis/elevation.tif    a 120 x 100 Float32 GeoTIFF over the same valley: a ridge and a basin, metres
    documents/gis/valley.qgz       the project QGIS opens at start: towns, roads, lakes, districts, elevation (top
                                   down), project CRS EPSG:4326, one fixed colour per layer, relative paths; each
                                   layer's id is the project's title and its name (valley_towns, harbour_piers)
    documents/gis/harbour.qgz      another project to open (harbour.gpkg: piers and buoys), CRS EPSG:3857
    documents/gis/extra/rivers.shp a shapefile of 3 rivers (name), to add as a new vector layer
    documents/gis/extra/landcover.tif  a 60 x 50 Byte GeoTIFF of 5 land-cover classes, to add as a raster layer

Every coordinate and value is computed from fixed formulas, so a rebuild writes the same data (GeoPackages
carry their own write times, hence a rebuild shows as a change in git; the content stays the same).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
QGIS_PYTHON = "/usr/bin/python3"  # Debian's python3-qgis lives in the system Python

SCRIPT = r'''
import math, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from osgeo import gdal, osr
from qgis.core import (Qgis, QgsApplication, QgsCoordinateReferenceSystem, QgsFeature, QgsField, QgsFields, QgsGeometry,
                       QgsPointXY, QgsProject, QgsRasterLayer, QgsVectorFileWriter, QgsVectorLayer, QgsWkbTypes,
                       QgsCoordinateTransformContext, QgsCoordinateTransform, QgsRectangle,
                       QgsReferencedRectangle, QgsVectorSimplifyMethod)
from PyQt5.QtCore import QVariant
from PyQt5.QtGui import QColor

out = sys.argv[1]
gis = os.path.join(out, "gis")
os.makedirs(os.path.join(gis, "extra"))
app = QgsApplication([], False)
app.initQgis()
WGS84 = QgsCoordinateReferenceSystem("EPSG:4326")


def write(path, layer_name, geom_type, fields, rows, driver="GPKG", append=False):
    qfields = QgsFields()
    for name, kind in fields:
        qfields.append(QgsField(name, {"str": QVariant.String, "int": QVariant.Int, "float": QVariant.Double}[kind],
                                len=80 if kind == "str" else 0))
    opts = QgsVectorFileWriter.SaveVectorOptions()
    opts.driverName, opts.layerName, opts.fileEncoding = driver, layer_name, "UTF-8"
    if append:
        opts.actionOnExistingFile = QgsVectorFileWriter.CreateOrOverwriteLayer
    writer = QgsVectorFileWriter.create(path, qfields, geom_type, WGS84, QgsCoordinateTransformContext(), opts)
    assert writer.hasError() == QgsVectorFileWriter.NoError, writer.errorMessage()
    for geom, attrs in rows:
        f = QgsFeature(qfields)
        f.setGeometry(geom)
        f.setAttributes(list(attrs))
        writer.addFeature(f)
    del writer


pt = lambda x, y: QgsGeometry.fromPointXY(QgsPointXY(x, y))
line = lambda pts: QgsGeometry.fromPolylineXY([QgsPointXY(x, y) for x, y in pts])
poly = lambda pts: QgsGeometry.fromPolygonXY([[QgsPointXY(x, y) for x, y in pts + [pts[0]]]])
ring = lambda cx, cy, rx, ry, n=24: poly([(round(cx + rx * math.cos(2 * math.pi * i / n), 5),
                                           round(cy + ry * math.sin(2 * math.pi * i / n), 5)) for i in range(n)])

gpkg = os.path.join(gis, "valley.gpkg")
write(gpkg, "towns", QgsWkbTypes.Point, [("name", "str"), ("population", "int")], [
    (pt(10.15, 45.20), ("Alder", 12400)), (pt(10.42, 45.55), ("Birchford", 5300)),
    (pt(10.71, 45.31), ("Cedarholm", 8800)), (pt(10.93, 45.78), ("Dunmere", 2100)),
    (pt(10.28, 45.86), ("Elmstead", 3900)), (pt(11.05, 45.12), ("Fernley", 6700))])
write(gpkg, "roads", QgsWkbTypes.LineString, [("name", "str"), ("kind", "str")], [
    (line([(10.15, 45.20), (10.42, 45.55), (10.93, 45.78)]), ("Valley Road", "primary")),
    (line([(10.15, 45.20), (10.71, 45.31), (11.05, 45.12)]), ("South Road", "primary")),
    (line([(10.42, 45.55), (10.28, 45.86)]), ("Elm Lane", "minor")),
    (line([(10.71, 45.31), (10.93, 45.78)]), ("Ridge Way", "minor"))], append=True)
write(gpkg, "lakes", QgsWkbTypes.Polygon, [("name", "str"), ("depth_m", "float")], [
    (ring(10.55, 45.70, 0.08, 0.05), ("Mirror Lake", 31.5)),
    (ring(10.86, 45.42, 0.05, 0.04), ("Heron Pond", 7.0))], append=True)
write(gpkg, "districts", QgsWkbTypes.Polygon, [("name", "str")], [
    (poly([(10.0, 45.0), (10.6, 45.0), (10.6, 45.5), (10.0, 45.5)]), ("Southwest",)),
    (poly([(10.6, 45.0), (11.2, 45.0), (11.2, 45.5), (10.6, 45.5)]), ("Southeast",)),
    (poly([(10.0, 45.5), (10.6, 45.5), (10.6, 46.0), (10.0, 46.0)]), ("Northwest",)),
    (poly([(10.6, 45.5), (11.2, 45.5), (11.2, 46.0), (10.6, 46.0)]), ("Northeast",))], append=True)
write(os.path.join(gis, "extra", "rivers.shp"), "rivers", QgsWkbTypes.LineString, [("name", "str")], [
    (line([(10.05, 45.95), (10.30, 45.70), (10.55, 45.70)]), ("Clearwater",)),
    (line([(10.55, 45.70), (10.70, 45.45), (10.86, 45.42)]), ("Silver Run",)),
    (line([(10.86, 45.42), (11.00, 45.25), (11.15, 45.05)]), ("Long Reach",))], driver="ESRI Shapefile")


def raster(path, cols, rows, kind, value, extent=(10.0, 11.2, 45.0, 46.0), nodata=None):
    xmin, xmax, ymin, ymax = extent
    ds = gdal.GetDriverByName("GTiff").Create(path, cols, rows, 1, kind, options=["COMPRESS=DEFLATE"])
    ds.SetGeoTransform((xmin, (xmax - xmin) / cols, 0, ymax, 0, -(ymax - ymin) / rows))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    ds.SetProjection(srs.ExportToWkt())
    band = ds.GetRasterBand(1)
    import numpy as np
    band.WriteArray(np.array([[value(c / cols, r / rows) for c in range(cols)] for r in range(rows)]))
    if nodata is not None:
        band.SetNoDataValue(nodata)
    ds = None


raster(os.path.join(gis, "elevation.tif"), 120, 100, gdal.GDT_Float32,
       lambda u, v: round(400 + 900 * math.exp(-((u - 0.75) ** 2) / 0.02) * (0.6 + 0.4 * v)
                          - 250 * math.exp(-((u - 0.45) ** 2 + (v - 0.3) ** 2) / 0.01), 1))
raster(os.path.join(gis, "extra", "landcover.tif"), 60, 50, gdal.GDT_Byte,
       lambda u, v: 1 + int(5 * ((u * 3.7 + v * 2.3) % 1.0)), extent=(10.2, 11.0, 45.2, 45.8), nodata=0)

COLOURS = {"towns": "#d7301f", "roads": "#636363", "lakes": "#3182bd", "districts": "#c7e9c0"}


def project(path, title, crs, layers, view):
    """`view`: the map extent QGIS opens the project at (xmin, ymin, xmax, ymax in EPSG:4326)."""
    prj = QgsProject.instance()
    prj.clear()
    prj.setTitle(title)
    prj.setCrs(QgsCoordinateReferenceSystem(crs))
    extent = QgsCoordinateTransform(WGS84, prj.crs(), prj).transformBoundingBox(QgsRectangle(*view))
    prj.viewSettings().setDefaultViewExtent(QgsReferencedRectangle(extent, prj.crs()))
    for layer in layers:
        assert layer.isValid(), layer.source()
        prj.addMapLayer(layer)
    prj.setFilePathStorage(Qgis.FilePathType.Relative)
    assert prj.write(path), path
    readable_ids(path, {layer.id(): f"{title.lower()}_{layer.name()}" for layer in layers})


def readable_ids(path, ids):
    """Each layer's id (QGIS makes one of its name and a random uuid) set to a readable one (valley_towns): the
    state compares layers by id, and the tasks can then name a layer of the start (`"below": "valley_roads"`) the
    same in every rebuild. QGIS keeps an id from the file only if it is over 10 characters long. A layer added
    later gets QGIS's own id (name_uuid), so a second layer of the same name is another record."""
    import zipfile
    with zipfile.ZipFile(path) as z:
        members = [(info, z.read(info)) for info in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in members:
            if info.filename.endswith(".qgs"):
                text = data.decode("utf-8")
                for old, new in ids.items():
                    text = text.replace(old, new)
                data = text.encode("utf-8")
            z.writestr(info, data)


def vector(path, name):
    layer = QgsVectorLayer(f"{path}|layername={name}", name, "ogr")
    layer.renderer().symbol().setColor(QColor(COLOURS.get(name, "#756bb1")))
    if layer.geometryType() == QgsWkbTypes.PointGeometry:
        # as QGIS's Layer Properties leaves a point layer (it turns simplification off for points): otherwise
        # applying that dialog would change a setting the task never asked for
        method = layer.simplifyMethod()
        method.setSimplifyHints(QgsVectorSimplifyMethod.NoSimplification)
        layer.setSimplifyMethod(method)
    return layer


# addMapLayer puts each new layer on top: add bottom-up
project(os.path.join(gis, "valley.qgz"), "Valley", "EPSG:4326",
        [QgsRasterLayer(os.path.join(gis, "elevation.tif"), "elevation")]
        + [vector(gpkg, n) for n in ("districts", "lakes", "roads", "towns")], view=(9.95, 44.95, 11.25, 46.05))

harbour = os.path.join(gis, "harbour.gpkg")
write(harbour, "piers", QgsWkbTypes.LineString, [("name", "str")], [
    (line([(10.50, 45.10), (10.52, 45.14)]), ("North Pier",)), (line([(10.56, 45.10), (10.57, 45.13)]), ("Ferry Pier",))])
write(harbour, "buoys", QgsWkbTypes.Point, [("name", "str")], [
    (pt(10.53, 45.16), ("Red Buoy",)), (pt(10.58, 45.15), ("Green Buoy",))], append=True)
project(os.path.join(gis, "harbour.qgz"), "Harbour", "EPSG:3857", [vector(harbour, "piers"), vector(harbour, "buoys")],
        view=(10.48, 45.08, 10.60, 45.18))
QgsProject.instance().clear()
app.exitQgis()
'''


def main() -> None:
    docs = HERE / "documents"
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir(parents=True)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(SCRIPT)
    try:
        subprocess.run([QGIS_PYTHON, f.name, str(docs)], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        sys.exit(f"QGIS's Python failed:\n{e.stdout[-2000:]}\n{e.stderr[-3000:]}")
    finally:
        Path(f.name).unlink()
    for p in sorted(HERE.rglob("*")):
        if p.is_file():
            print(p.relative_to(HERE), p.stat().st_size)


if __name__ == "__main__":
    main()
