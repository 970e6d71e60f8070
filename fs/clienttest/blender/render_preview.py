# Renders .glb files with Blender's Workbench engine, headless, into one PNG
# contact sheet: one labelled tile per file, seen from the front-right and
# above (Blender's -Y is the front). Workbench shows textures: a material
# whose base colour is an image (as the importer builds it from the .glb's
# baseColorTexture) shows that image through its UVs; a material without
# one shows a colour of its own, distinct from its neighbours'.
#
#   blender -b --factory-startup --python-exit-code 1 \
#       --python render_preview.py -- OUT.png SMALL.png LABEL=FILE.glb ...
#
# SMALL.png is a sheet for the README within SMALL_BYTES: SMALL_TILE-pixel
# tiles in at most 256 colours, of as many files as fit, taken in turn
# from each top folder (textured files first). `make preview` runs it through
# fs/clienttest/preview.sh on the .glb files of the mounted testdata/ and
# ../shared/assets trees.

import colorsys
import math
import os
import shutil
import struct
import sys
import tempfile
import zlib

import numpy

numpy.bool = bool  # Blender 3.4's glTF importer with numpy 1.24 (see inspect_imports.py)

import bpy  # noqa: E402
import mathutils  # noqa: E402

TILE = 256
SMALL_TILE = 128
SMALL_BYTES = 300_000
LABEL_ROWS = 1


def reset():
    bpy.ops.wm.read_factory_settings(use_empty=True)


def setup_render(path):
    sc = bpy.context.scene
    sc.render.engine = 'BLENDER_WORKBENCH'
    sc.render.resolution_x = sc.render.resolution_y = TILE
    sc.render.resolution_percentage = 100
    sc.render.film_transparent = False
    sc.render.image_settings.file_format = 'PNG'
    # Plain sRGB (Filmic greys everything out) and one anti-aliasing pass:
    # the software OpenGL of a headless machine renders 8 samples slowly.
    sc.view_settings.view_transform = 'Standard'
    sc.display.render_aa = 'FXAA'
    sc.render.filepath = path
    sh = sc.display.shading
    sh.light = 'STUDIO'
    # TEXTURE: each material's active image node through the active UV
    # map; a material without an image falls back to its display colour.
    sh.color_type = 'TEXTURE'
    sh.show_object_outline = True
    if sc.world is None:
        sc.world = bpy.data.worlds.new("w")
    sc.world.color = (0.02, 0.025, 0.03)  # the render's background


def bounds(objs):
    lo = mathutils.Vector((math.inf,) * 3)
    hi = mathutils.Vector((-math.inf,) * 3)
    for ob in objs:
        for c in ob.bound_box:
            w = ob.matrix_world @ mathutils.Vector(c)
            lo = mathutils.Vector(map(min, lo, w))
            hi = mathutils.Vector(map(max, hi, w))
    return lo, hi


def base_colour_image(m):
    """The image node that feeds the Principled BSDF's Base Color, through
    any mix or colour nodes between them (the importer puts one for a base
    colour factor), or None."""
    if not m.use_nodes or m.node_tree is None:
        return None
    bsdf = next((n for n in m.node_tree.nodes if n.type == 'BSDF_PRINCIPLED'), None)
    if bsdf is None:
        return None
    todo, seen = [bsdf.inputs['Base Color']], set()
    while todo:
        sock = todo.pop()
        for link in sock.links:
            n = link.from_node
            if n.name in seen:
                continue
            seen.add(n.name)
            if n.type == 'TEX_IMAGE' and n.image is not None:
                return n
            todo.extend(n.inputs)
    return None


def write_small(path, sheet, tile):
    """Writes sheet (rows top to bottom, float RGBA 0-1, TILE-pixel tiles)
    scaled to tile-pixel tiles (box filter) as an 8-bit paletted PNG: the
    256 colours are a k-means of the pixels, each pixel the nearest."""
    f = TILE // tile
    h, w = sheet.shape[0] // f, sheet.shape[1] // f
    rgb = sheet[:h * f, :w * f, :3].reshape(h, f, w, f, 3).mean(axis=(1, 3))
    px = numpy.clip(rgb * 255 + 0.5, 0, 255).reshape(-1, 3)
    rng = numpy.random.default_rng(1)
    sample = px[rng.choice(len(px), size=min(len(px), 40000), replace=False)]
    pal = sample[rng.choice(len(sample), size=256, replace=False)].copy()

    def nearest(pts):
        out = numpy.empty(len(pts), dtype=numpy.int64)
        for i in range(0, len(pts), 65536):
            c = pts[i:i + 65536]
            d = ((c[:, None, :] - pal[None, :, :]) ** 2).sum(axis=2)
            out[i:i + 65536] = d.argmin(axis=1)
        return out

    for _ in range(12):
        idx = nearest(sample)
        for k in range(256):
            sel = sample[idx == k]
            if len(sel):
                pal[k] = sel.mean(axis=0)
    idx = nearest(px).astype(numpy.uint8).reshape(h, w)
    pal8 = numpy.clip(pal + 0.5, 0, 255).astype(numpy.uint8)

    def chunk(typ, data):
        return struct.pack(">I", len(data)) + typ + data + struct.pack(">I", zlib.crc32(typ + data) & 0xffffffff)

    raw = b"".join(b"\x00" + idx[y].tobytes() for y in range(h))
    with open(path, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n")
        fh.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)))
        fh.write(chunk(b"PLTE", pal8.tobytes()))
        fh.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        fh.write(chunk(b"IEND", b""))


def render_tile(glb, label, out):
    reset()
    bpy.ops.import_scene.gltf(filepath=glb)
    # After the import: the glTF importer switches any engine but Cycles
    # and Eevee to Eevee.
    setup_render(out)
    meshes = [ob for ob in bpy.data.objects if ob.type == 'MESH']
    # Workbench shows the active image node: make it the base colour's
    # image, never a normal or metallic-roughness map. A material without
    # one gets a distinct display colour, which Workbench then shows.
    textured = 0
    for i, m in enumerate(sorted(bpy.data.materials, key=lambda m: m.name)):
        img = base_colour_image(m)
        if img is not None:
            m.node_tree.nodes.active = img
            textured += 1
            continue
        if m.use_nodes and m.node_tree is not None:
            for n in m.node_tree.nodes:
                if n.type != 'TEX_IMAGE':
                    m.node_tree.nodes.active = n
                    break
        r, g, b = colorsys.hsv_to_rgb((i * 0.618034) % 1, 0.45, 0.95)
        m.diffuse_color = (r, g, b, 1)
    print("meshfs preview tile: %s: %d materials, %d textured" % (label, len(bpy.data.materials), textured))
    sc = bpy.context.scene
    cam_data = bpy.data.cameras.new("cam")
    cam_data.type = 'ORTHO'
    cam = bpy.data.objects.new("cam", cam_data)
    sc.collection.objects.link(cam)
    sc.camera = cam
    if meshes:
        lo, hi = bounds(meshes)
    else:
        lo, hi = mathutils.Vector((-1, -1, -1)), mathutils.Vector((1, 1, 1))
    centre = (lo + hi) / 2
    radius = max((hi - lo).length / 2, 1e-3)
    direction = mathutils.Vector((1.0, -1.4, 0.9)).normalized()
    cam.location = centre + direction * radius * 4
    cam.rotation_euler = (-direction).to_track_quat('-Z', 'Y').to_euler()
    cam_data.ortho_scale = radius * 2.1
    cam_data.clip_end = radius * 10
    # The label: a text object in the camera's frame, along the bottom edge.
    txt = bpy.data.curves.new("label", 'FONT')
    txt.body = label
    size = cam_data.ortho_scale / 16
    txt.size = size
    tob = bpy.data.objects.new("label", txt)
    sc.collection.objects.link(tob)
    tob.parent = cam
    half = cam_data.ortho_scale / 2
    tob.location = (-half + size * 0.3, -half + size * 0.4, -radius)
    tmat = bpy.data.materials.new("label")
    tmat.diffuse_color = (1, 1, 1, 1)
    txt.materials.append(tmat)
    if len(label) * size * 0.55 > cam_data.ortho_scale * 0.95:
        txt.size = size * cam_data.ortho_scale * 0.95 / (len(label) * size * 0.55)
    bpy.ops.render.render(write_still=True)
    return textured


def pick_small(labels, textured):
    """Tile indices for the small sheet, in the order to take them:
    textured files first, then the other real assets, then the fixtures
    of testdata/; within each, a turn through the top folders (the label's
    first two parts), each giving its next file."""
    groups = {}
    for i, lab in enumerate(labels):
        groups.setdefault("/".join(lab.split("/")[:2]), []).append(i)
    turn = {}
    for g in groups.values():
        for k, i in enumerate(g):
            turn[i] = k
    return sorted(range(len(labels)), key=lambda i: (
        textured[i] == 0, labels[i].startswith("testdata/"), turn[i], i))


def sheet_of(tiles):
    """The tiles (TILE-pixel float RGBA arrays, rows bottom to top) in a
    square-ish grid, rows top to bottom."""
    cols = max(1, math.ceil(math.sqrt(len(tiles))))
    rows = max(1, math.ceil(len(tiles) / cols))
    sheet = numpy.zeros((rows * TILE, cols * TILE, 4), dtype=numpy.float32)
    sheet[..., 3] = 1
    for i, px in enumerate(tiles):
        r, c = i // cols, i % cols
        sheet[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE] = px[::-1]
    return sheet


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    out, small, items = argv[0], argv[1], argv[2:]
    tmp = tempfile.mkdtemp(prefix="meshfs-preview-")
    tiles, labels, textured = [], [], []
    for i, item in enumerate(items):
        label, _, glb = item.partition("=")
        path = os.path.join(tmp, "%03d.png" % i)
        textured.append(render_tile(glb, label, path))
        img = bpy.data.images.load(path)
        img.colorspace_settings.name = 'Non-Color'  # pixels as stored, no sRGB round trip
        px = numpy.array(img.pixels[:], dtype=numpy.float32).reshape(img.size[1], img.size[0], 4)
        bpy.data.images.remove(img)
        tiles.append(px[:TILE, :TILE])
        labels.append(label)
    shutil.rmtree(tmp)
    sheet = sheet_of(tiles)
    img = bpy.data.images.new("sheet", sheet.shape[1], sheet.shape[0], alpha=True)
    img.colorspace_settings.name = 'Non-Color'
    img.pixels.foreach_set(sheet[::-1].ravel())  # Blender's rows run bottom to top
    st = bpy.context.scene.render.image_settings
    st.file_format, st.color_mode, st.compression = 'PNG', 'RGB', 100
    img.save_render(out, scene=bpy.context.scene)
    order = pick_small(labels, textured)
    n = min(len(order), 49)
    while True:
        write_small(small, sheet_of([tiles[i] for i in order[:n]]), SMALL_TILE)
        if os.path.getsize(small) <= SMALL_BYTES or n <= 4:
            break
        n = max(4, int(n * 0.8))
    print("meshfs preview: %d files (%d textured) -> %s; %d of them -> %s (%d bytes)" % (
        len(tiles), sum(1 for t in textured if t), out, n, small, os.path.getsize(small)))


main()
