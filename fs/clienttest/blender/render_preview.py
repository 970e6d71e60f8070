# Renders .glb files with Blender's Workbench engine, headless, into one PNG
# contact sheet: one labelled tile per file, each material in its own
# colour, seen from the front-right and above (Blender's -Y is the front).
#
#   blender -b --factory-startup --python-exit-code 1 \
#       --python render_preview.py -- OUT.png LABEL=FILE.glb ...
#
# `make preview` runs it through fs/clienttest/preview.sh on the .glb files
# of the mounted testdata/ tree.

import colorsys
import math
import os
import sys
import tempfile

import numpy

numpy.bool = bool  # Blender 3.4's glTF importer with numpy 1.24 (see inspect_imports.py)

import bpy  # noqa: E402
import mathutils  # noqa: E402

TILE = 256
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
    sh.color_type = 'MATERIAL'
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


def render_tile(glb, label, out):
    reset()
    bpy.ops.import_scene.gltf(filepath=glb)
    # After the import: the glTF importer switches any engine but Cycles
    # and Eevee to Eevee.
    setup_render(out)
    meshes = [ob for ob in bpy.data.objects if ob.type == 'MESH']
    # One distinct colour per material, as the viewport display colour
    # that Workbench's MATERIAL mode shows (the textures are not embedded).
    for i, m in enumerate(sorted(bpy.data.materials, key=lambda m: m.name)):
        r, g, b = colorsys.hsv_to_rgb((i * 0.618034) % 1, 0.45, 0.95)
        m.diffuse_color = (r, g, b, 1)
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


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    out, items = argv[0], argv[1:]
    tmp = tempfile.mkdtemp(prefix="meshfs-preview-")
    tiles = []
    for i, item in enumerate(items):
        label, _, glb = item.partition("=")
        path = os.path.join(tmp, "%03d.png" % i)
        render_tile(glb, label, path)
        tiles.append(path)
    cols = max(1, math.ceil(math.sqrt(len(tiles))))
    rows = max(1, math.ceil(len(tiles) / cols))
    sheet = numpy.zeros((rows * TILE, cols * TILE, 4), dtype=numpy.float32)
    sheet[..., 3] = 1
    for i, path in enumerate(tiles):
        img = bpy.data.images.load(path)
        img.colorspace_settings.name = 'Non-Color'  # pixels as stored, no sRGB round trip
        px = numpy.array(img.pixels[:], dtype=numpy.float32).reshape(img.size[1], img.size[0], 4)
        r, c = i // cols, i % cols
        # Image rows run bottom to top: tile row 0 goes at the top.
        y0 = (rows - 1 - r) * TILE
        sheet[y0:y0 + TILE, c * TILE:(c + 1) * TILE] = px[:TILE, :TILE]
        bpy.data.images.remove(img)
    img = bpy.data.images.new("sheet", cols * TILE, rows * TILE, alpha=True)
    img.colorspace_settings.name = 'Non-Color'
    img.pixels.foreach_set(sheet.ravel())
    st = bpy.context.scene.render.image_settings
    st.file_format, st.color_mode, st.compression = 'PNG', 'RGB', 100
    img.save_render(out, scene=bpy.context.scene)
    print("meshfs preview: %d files -> %s" % (len(tiles), out))


main()
