# Renders .glb files with Blender's Workbench engine, headless, each with
# the camera of meshfs's NAME.preview.png (export/preview): orthographic,
# looking from glTF direction (+1, +1, +1) (Blender's (+1, -1, +1)) toward
# the centre of the bounding box of the scene's vertices as Blender
# evaluates them, up glTF +Y (Blender +Z), the box's circumscribed sphere
# exactly filling the square. Transparent film; flat light and texture
# colours (each material's base colour image, as the importer wires it;
# its base colour otherwise), so a render's pixels are the surface's own
# colour and its alpha the silhouette. The scene is imported without the
# .glb's animations, as the preview draws it (Blender's importer would pose
# it at the first one's first frame). previews_test.go compares them.
#
#   blender -b --factory-startup --python-exit-code 1 \
#       --python judge_previews.py -- JOBS.json REPORT.json
#
# JOBS.json is a list of {"glb": path, "out": png path, "size": pixels};
# REPORT.json gets one {"meshes", "textured", "error"} per job, in order.

import json
import math
import os
import struct
import sys
import tempfile

import numpy

numpy.bool = bool  # Blender 3.4's glTF importer with numpy 1.24 (see inspect_imports.py)

import bmesh  # noqa: E402
import bpy  # noqa: E402
import mathutils  # noqa: E402


def setup_render(path, size):
    sc = bpy.context.scene
    sc.render.engine = 'BLENDER_WORKBENCH'
    sc.render.resolution_x = sc.render.resolution_y = size
    sc.render.resolution_percentage = 100
    sc.render.film_transparent = True
    sc.render.image_settings.file_format = 'PNG'
    sc.render.image_settings.color_mode = 'RGBA'
    sc.view_settings.view_transform = 'Standard'
    # One sample at each pixel's centre, as meshfs samples.
    sc.display.render_aa = 'OFF'
    sc.render.filepath = path
    sh = sc.display.shading
    sh.light = 'FLAT'
    sh.color_type = 'TEXTURE'
    sh.show_object_outline = False
    sh.show_cavity = False
    sh.show_shadows = False
    sh.show_specular_highlight = False
    sh.show_backface_culling = False


def base_colour_image(m):
    """The image node that feeds the Principled BSDF's Base Color, through
    any mix or colour nodes between them, or None."""
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


def vertex_bounds(meshes):
    """The world-space box of every vertex of the evaluated meshes."""
    deps = bpy.context.evaluated_depsgraph_get()
    lo = numpy.full(3, math.inf)
    hi = numpy.full(3, -math.inf)
    for ob in meshes:
        ev = ob.evaluated_get(deps)
        me = ev.to_mesh()
        n = len(me.vertices)
        if n:
            co = numpy.empty(n * 3, dtype=numpy.float64)
            me.vertices.foreach_get("co", co)
            co = co.reshape(n, 3)
            mw = numpy.array(ev.matrix_world)
            w = co @ mw[:3, :3].T + mw[:3, 3]
            w = w[numpy.isfinite(w).all(axis=1)]
            if len(w):
                lo = numpy.minimum(lo, w.min(axis=0))
                hi = numpy.maximum(hi, w.max(axis=0))
        ev.to_mesh_clear()
    return lo, hi


def cull_back_faces(meshes, towards):
    """Deletes the faces that face away from the camera (towards points at
    it) of every material that culls them (the importer's
    use_backface_culling: not doubleSided): Workbench draws back faces
    whatever the material says, and under an orthographic camera a face's
    side is its world normal against one direction. Each object's
    modifiers (a skin's armature) are applied first. A face's front normal
    in the world is the inverse transpose of the object's matrix times its
    winding's normal, whatever the matrix's determinant: a mirroring
    transform reverses the winding (glTF's rule for it) and flips that
    normal back, so no sign is applied for it."""
    deps = bpy.context.evaluated_depsgraph_get()
    for ob in meshes:
        ev = ob.evaluated_get(deps)
        me = bpy.data.meshes.new_from_object(ev)
        mw = ev.matrix_world.to_3x3()
        nm = mw.inverted_safe().transposed()
        cull = [m is not None and m.use_backface_culling for m in me.materials]
        bm = bmesh.new()
        bm.from_mesh(me)
        kill = [f for f in bm.faces
                if (cull[f.material_index] if f.material_index < len(cull) else False)
                and (nm @ f.normal).dot(towards) <= 0]
        bmesh.ops.delete(bm, geom=kill, context='FACES_ONLY')
        bm.to_mesh(me)
        bm.free()
        ob.modifiers.clear()
        ob.data = me


def clear():
    """Removes every data-block the last file's import and render made
    (cheaper than a factory reset per file)."""
    for coll in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.images,
                 bpy.data.armatures, bpy.data.cameras, bpy.data.actions, bpy.data.textures,
                 bpy.data.node_groups, bpy.data.lights, bpy.data.curves):
        for block in list(coll):
            coll.remove(block)
    for c in list(bpy.data.collections):
        bpy.data.collections.remove(c)


def unanimated(path, tmp):
    """The .glb at path without its animations (a copy in the folder tmp;
    path itself when it has none): the preview draws the scene unanimated,
    and Blender's importer poses every node it animates at the first
    animation's first frame."""
    with open(path, 'rb') as f:
        b = f.read()
    magic, version, _ = struct.unpack_from('<III', b, 0)
    n, kind = struct.unpack_from('<II', b, 12)
    if magic != 0x46546C67 or kind != 0x4E4F534A:
        return path
    doc = json.loads(b[20:20 + n])
    if not doc.pop('animations', None):
        return path
    js = json.dumps(doc).encode()
    js += b' ' * (-len(js) % 4)
    rest = b[20 + n:]
    out = os.path.join(tmp, 'unanimated.glb')
    with open(out, 'wb') as f:
        f.write(struct.pack('<III', magic, version, 20 + len(js) + len(rest)))
        f.write(struct.pack('<II', len(js), kind))
        f.write(js)
        f.write(rest)
    return out


def render(job):
    clear()
    with tempfile.TemporaryDirectory() as tmp:
        bpy.ops.import_scene.gltf(filepath=unanimated(job["glb"], tmp))
    # After the import: the importer switches the engine to Eevee.
    setup_render(job["out"], job["size"])
    meshes = [ob for ob in bpy.data.objects if ob.type == 'MESH']
    textured = 0
    for m in bpy.data.materials:
        img = base_colour_image(m)
        if img is not None:
            # Workbench shows the active image node.
            m.node_tree.nodes.active = img
            textured += 1
        elif m.use_nodes and m.node_tree is not None:
            bsdf = next((n for n in m.node_tree.nodes if n.type == 'BSDF_PRINCIPLED'), None)
            if bsdf is not None:
                m.diffuse_color = bsdf.inputs['Base Color'].default_value
            for n in m.node_tree.nodes:
                if n.type != 'TEX_IMAGE':
                    m.node_tree.nodes.active = n
                    break
    sc = bpy.context.scene
    cam_data = bpy.data.cameras.new("cam")
    cam_data.type = 'ORTHO'
    cam = bpy.data.objects.new("cam", cam_data)
    sc.collection.objects.link(cam)
    sc.camera = cam
    lo, hi = vertex_bounds(meshes)
    if not (lo[0] <= hi[0]):
        lo, hi = numpy.zeros(3), numpy.zeros(3)
    centre = mathutils.Vector(((lo + hi) / 2).tolist())
    radius = max(float(numpy.linalg.norm(hi - lo)) / 2, 1e-6)
    direction = mathutils.Vector((1.0, -1.0, 1.0)).normalized()
    cull_back_faces(meshes, direction)
    cam.location = centre + direction * radius * 3
    cam.rotation_euler = (-direction).to_track_quat('-Z', 'Y').to_euler()
    cam_data.ortho_scale = radius * 2
    cam_data.clip_start = radius * 0.5
    cam_data.clip_end = radius * 5.5
    # The headless GL now and then hands back an empty frame for a scene
    # with faces in view: render such a frame again (at most twice).
    for _ in range(3):
        bpy.ops.render.render(write_still=True)
        if not any(len(ob.data.polygons) for ob in meshes) or drawn(job["out"]):
            break
        print("meshfs judge: %s: an empty frame, rendered again" % job["glb"], flush=True)
    return {"meshes": len(meshes), "textured": textured, "error": ""}


def drawn(path):
    """Whether the PNG at path has a pixel that is not transparent."""
    img = bpy.data.images.load(path)
    try:
        px = numpy.empty(len(img.pixels), dtype=numpy.float32)
        img.pixels.foreach_get(px)
        return bool((px[3::4] > 0).any())
    finally:
        bpy.data.images.remove(img)


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    with open(argv[0]) as f:
        jobs = json.load(f)
    reports = []
    bpy.ops.wm.read_factory_settings(use_empty=True)
    for job in jobs:
        try:
            reports.append(render(job))
        except Exception as e:  # one file's failure is reported, not fatal
            reports.append({"meshes": 0, "textured": 0, "error": repr(e)})
        print("meshfs judge: %s: %s" % (job["glb"], reports[-1]), flush=True)
    with open(argv[1], "w") as f:
        json.dump(reports, f)


main()
