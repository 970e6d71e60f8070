# Imports meshfs outputs into Blender (3.4, headless) and reports what
# Blender made of each, as JSON; the Go test (internal/clienttest) compares the
# report with what meshfs says the file holds. This script judges nothing
# itself: it only fails (exit code 1 through --python-exit-code) when it
# cannot run at all. A file whose import raises is reported with "error".
#
#   blender -b --factory-startup --python-exit-code 1 \
#       --python inspect_imports.py -- JOBS.json REPORT.json
#
# JOBS.json is a list of {"path": ".../x.glb" or ".../x.obj", "geometry":
# bool, "deform": bool}. "geometry" adds world-space vertices, polygons
# (normal, vertex indices, first-layer UV per corner) for small meshes;
# "deform" rotates every weighted bone of every armature in turn and
# reports how far the evaluated mesh moved. "animation" (a path to an
# animation-only .glb) imports that file after the mesh, puts each action it
# made on the mesh's armature in turn and reports the bones it keys, which of
# them the armature lacks, and how far the pose bones and the meshes move
# between the action's first frame and its middle one (the rest pose, shown
# as frame -1, and the frame for a one-frame action). "play" does the same
# with the actions of the file itself (a NAME.animated.glb). Every report
# lists the images (name, width and height as Blender loaded them) and per
# material the images that reach its Principled BSDF's Base Color, those
# that reach its Normal through a Normal Map node, and its blend method.
#
# One Blender process handles every job (starting Blender costs about a
# second); the scene is emptied between files so names never collide with
# a previous file's (Blender would rename them "name.001").

import json
import math
import sys
import traceback

# Blender 3.4's glTF importer uses numpy.bool, which numpy 1.24 removed
# (it was an alias of bool): restore the alias before any import runs.
import numpy

numpy.bool = bool

import bpy  # noqa: E402
import mathutils  # noqa: E402


def reset():
    """Empty the file: every object and data-block of the previous import
    (read_factory_settings would too, but costs about a second a file)."""
    for coll in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.armatures,
                 bpy.data.actions, bpy.data.images, bpy.data.textures, bpy.data.node_groups,
                 bpy.data.shape_keys, bpy.data.cameras, bpy.data.lights, bpy.data.collections):
        ids = list(coll)
        if ids:
            bpy.data.batch_remove(ids)
    bpy.data.orphans_purge(do_recursive=True)


def vec(v):
    return [round(float(c), 6) for c in v]


def mesh_report(ob, geometry):
    me = ob.data
    r = {
        "object": ob.name,
        "mesh": me.name,
        "vertices": len(me.vertices),
        "faces": len(me.polygons),
        "materials": [s.material.name if s.material else None for s in ob.material_slots],
        "uv_layers": [l.name for l in me.uv_layers],
        "color_attributes": [a.name for a in me.color_attributes],
        "vertex_groups": [g.name for g in ob.vertex_groups],
        "shape_keys": [k.name for k in me.shape_keys.key_blocks[1:]] if me.shape_keys else [],
        "armature": None,
    }
    for m in ob.modifiers:
        if m.type == 'ARMATURE' and m.object is not None:
            r["armature"] = m.object.name
    r["normals"], r["flipped_faces"] = flipped_faces(me)
    if geometry and len(me.polygons) <= 512:
        mw = ob.matrix_world
        nm = mw.to_3x3().inverted_safe().transposed()
        uv = me.uv_layers[0].data if len(me.uv_layers) else None
        r["world_vertices"] = [vec(mw @ v.co) for v in me.vertices]
        polys = []
        for p in me.polygons:
            n = (nm @ p.normal).normalized()
            polys.append({
                "vertices": list(p.vertices),
                "normal": vec(n),
                "uvs": [vec(uv[li].uv) for li in p.loop_indices] if uv else [],
            })
        r["polygons"] = polys
    return r


def flipped_faces(me):
    """Counts the faces whose winding (Blender's face normal) points against
    the file's own vertex normals (imported as custom split normals): an
    inside-out face. Returns (whether the mesh has custom normals, count)."""
    if not me.has_custom_normals or len(me.polygons) == 0:
        return False, 0
    me.calc_normals_split()
    n = numpy.empty(len(me.loops) * 3, dtype=numpy.float32)
    me.loops.foreach_get("normal", n)
    n = n.reshape(-1, 3)
    start = numpy.empty(len(me.polygons), dtype=numpy.int32)
    me.polygons.foreach_get("loop_start", start)
    total = numpy.empty(len(me.polygons), dtype=numpy.int32)
    me.polygons.foreach_get("loop_total", total)
    fn = numpy.empty(len(me.polygons) * 3, dtype=numpy.float32)
    me.polygons.foreach_get("normal", fn)
    fn = fn.reshape(-1, 3)
    summed = numpy.add.reduceat(n, start) if numpy.all(total > 0) else n[start]
    return True, int(numpy.count_nonzero(numpy.einsum("ij,ij->i", summed, fn) < 0))


def upstream_images(socket, seen=None):
    """The names of the Image Texture nodes whose output reaches socket,
    through any nodes between (a multiply by the base colour factor, a
    separate for alpha)."""
    if seen is None:
        seen = set()
    out = set()
    for link in socket.links:
        node = link.from_node
        if node.name in seen:
            continue
        seen.add(node.name)
        if node.type == 'TEX_IMAGE' and node.image is not None:
            out.add(node.image.name)
        for inp in node.inputs:
            out |= upstream_images(inp, seen)
    return out


def upstream_nodes(socket, kind, seen=None):
    """The nodes of type kind whose output reaches socket."""
    if seen is None:
        seen = set()
    out = []
    for link in socket.links:
        node = link.from_node
        if node.name in seen:
            continue
        seen.add(node.name)
        if node.type == kind:
            out.append(node)
        for inp in node.inputs:
            out += upstream_nodes(inp, kind, seen)
    return out


def material_report(mat):
    """What feeds the Principled BSDF of mat: the images that reach its
    Base Color, those that reach its Normal through a Normal Map node, and
    the blend method."""
    r = {"name": mat.name, "blend_method": mat.blend_method,
         "base_color_images": [], "normal_images": []}
    if not mat.use_nodes or mat.node_tree is None:
        return r
    for node in mat.node_tree.nodes:
        if node.type != 'BSDF_PRINCIPLED':
            continue
        r["base_color_images"] += sorted(upstream_images(node.inputs["Base Color"]))
        for nm in upstream_nodes(node.inputs["Normal"], 'NORMAL_MAP'):
            r["normal_images"] += sorted(upstream_images(nm.inputs["Color"]))
    return r


def evaluated_coords(ob, depsgraph):
    ev = ob.evaluated_get(depsgraph)
    me = ev.to_mesh()
    co = [ev.matrix_world @ v.co for v in me.vertices]
    ev.to_mesh_clear()
    return co


def deform_report(arm, meshes):
    """Rotate each bone that weighs on a vertex by 90° and measure how far
    the meshes bound to arm move: a bone whose weights Blender dropped moves
    nothing."""
    bound = [ob for ob in meshes if any(
        m.type == 'ARMATURE' and m.object == arm for m in ob.modifiers)]
    out = {}
    if not bound:
        return out
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for pb in arm.pose.bones:
        pb.rotation_mode = 'QUATERNION'
    bpy.context.view_layer.update()
    rest = {ob.name: evaluated_coords(ob, depsgraph) for ob in bound}
    for pb in arm.pose.bones:
        weighted = False
        for ob in bound:
            g = ob.vertex_groups.get(pb.name)
            if g is None:
                continue
            for v in ob.data.vertices:
                for ge in v.groups:
                    if ge.group == g.index and ge.weight > 0.01:
                        weighted = True
                        break
                if weighted:
                    break
        if not weighted:
            continue
        saved = pb.rotation_quaternion.copy()
        # About the bone's own X axis: a bone never lies along it.
        pb.rotation_quaternion = mathutils.Quaternion((1, 0, 0), math.radians(90))
        bpy.context.view_layer.update()
        depsgraph = bpy.context.evaluated_depsgraph_get()
        moved = 0.0
        for ob in bound:
            now = evaluated_coords(ob, depsgraph)
            for a, b in zip(rest[ob.name], now):
                moved = max(moved, (a - b).length)
        pb.rotation_quaternion = saved
        bpy.context.view_layer.update()
        out[pb.name] = moved
    return out


def bone_poses(arm):
    return {pb.name: arm.matrix_world @ pb.matrix for pb in arm.pose.bones}


def pose_moved(a, b):
    """Whether two pose matrices differ: a bone turned about its own head
    moves no head, but changes its matrix."""
    return max(abs(a[i][j] - b[i][j]) for i in range(4) for j in range(4)) > 1e-6


def play_report(path, arm, meshes):
    """Import the animation file at path and play each action it made on
    arm: keyed bones, those arm lacks, and how far bones and meshes move
    between two frames."""
    before = set(bpy.data.actions)
    res = bpy.ops.import_scene.gltf(filepath=path)
    if 'FINISHED' not in res:
        raise RuntimeError("animation importer returned %s" % sorted(res))
    return play_actions([a for a in bpy.data.actions if a not in before], arm, meshes)


def play_actions(actions, arm, meshes):
    """Put each action on arm in turn: keyed bones, those arm lacks, and
    how far bones and meshes move between two frames."""
    bound = [ob for ob in meshes if any(
        m.type == 'ARMATURE' and m.object == arm for m in ob.modifiers)]
    scene = bpy.context.scene
    out = []
    for act in actions:
        keyed = sorted({fc.data_path.split('"')[1] for fc in act.fcurves
                        if fc.data_path.startswith('pose.bones["')})
        r = {"action": act.name, "keyed_bones": keyed,
             "missing_bones": [b for b in keyed if b not in arm.pose.bones]}
        arm.animation_data_create()
        arm.animation_data.action = act
        f0, f1 = act.frame_range
        f0, mid = int(f0), int(round((f0 + f1) / 2))
        if mid == f0:
            # A one-frame animation (a pose): its frame against the rest.
            arm.animation_data.action = None
            for pb in arm.pose.bones:
                pb.matrix_basis = mathutils.Matrix.Identity(4)
            f0 = -1
        scene.frame_set(max(f0, 0))
        depsgraph = bpy.context.evaluated_depsgraph_get()
        poses0 = bone_poses(arm)
        co0 = {ob.name: evaluated_coords(ob, depsgraph) for ob in bound}
        arm.animation_data.action = act
        scene.frame_set(mid)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        poses1 = bone_poses(arm)
        r["frames"] = [f0, mid]
        r["bones_moved"] = sum(1 for b in poses0 if pose_moved(poses0[b], poses1[b]))
        moved = 0.0
        for ob in bound:
            for a, b in zip(co0[ob.name], evaluated_coords(ob, depsgraph)):
                moved = max(moved, (a - b).length)
        r["mesh_moved"] = moved
        arm.animation_data.action = None
        out.append(r)
    return out


def inspect(job):
    path = job["path"]
    r = {"path": path}
    reset()
    try:
        if path.endswith(".glb"):
            res = bpy.ops.import_scene.gltf(filepath=path)
        elif path.endswith(".obj"):
            # Blender 3.4's C++ OBJ importer; defaults: Y up, -Z forward.
            res = bpy.ops.wm.obj_import(filepath=path)
        else:
            raise ValueError("not a .glb or .obj: " + path)
        if 'FINISHED' not in res:
            raise RuntimeError("importer returned %s" % sorted(res))
    except Exception:
        r["error"] = traceback.format_exc()
        return r
    meshes = [ob for ob in bpy.data.objects if ob.type == 'MESH']
    arms = [ob for ob in bpy.data.objects if ob.type == 'ARMATURE']
    r["meshes"] = [mesh_report(ob, job.get("geometry", False)) for ob in meshes]
    r["armatures"] = [{"object": a.name, "bones": [b.name for b in a.data.bones]} for a in arms]
    r["actions"] = [a.name for a in bpy.data.actions]
    r["materials"] = sorted(m.name for m in bpy.data.materials)
    r["material_nodes"] = [material_report(m) for m in bpy.data.materials]
    # Reading size loads the packed image: what Blender decoded of it.
    r["images"] = [{"name": im.name, "size": list(im.size)} for im in bpy.data.images
                   if im.type == 'IMAGE']
    if job.get("deform"):
        r["deform"] = {a.name: deform_report(a, meshes) for a in arms}
    if job.get("animation"):
        if len(arms) != 1:
            r["error"] = "%d armatures to play %s on" % (len(arms), job["animation"])
            return r
        try:
            r["played"] = play_report(job["animation"], arms[0], meshes)
        except Exception:
            r["error"] = traceback.format_exc()
    elif job.get("play"):
        if len(arms) != 1:
            r["error"] = "%d armatures to play the file's actions on" % len(arms)
            return r
        r["played"] = play_actions(list(bpy.data.actions), arms[0], meshes)
    return r


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    jobs_path, report_path = argv[0], argv[1]
    with open(jobs_path) as f:
        jobs = json.load(f)
    reports = []
    for job in jobs:
        try:
            reports.append(inspect(job))
        except Exception:
            reports.append({"path": job["path"], "error": traceback.format_exc()})
    with open(report_path, "w") as f:
        json.dump(reports, f)


main()
