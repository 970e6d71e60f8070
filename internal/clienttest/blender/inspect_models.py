# Imports assembled models (meshfs NAME.glb of a .mdl) into Blender (3.4,
# headless) and reports, as JSON, the hierarchy Blender made of each: its
# objects with their parents (an object parented to a bone names the bone),
# the bones of its armatures with theirs, its materials, images and
# actions, and for each armature how far its meshes move when each of its
# weighted bones is rotated. The Go test (internal/clienttest, TestModelClients)
# compares the report with the .glb. This script judges nothing itself.
#
#   blender -b --factory-startup --python-exit-code 1 \
#       --python inspect_models.py -- JOBS.json REPORT.json
#
# JOBS.json is a list of paths; the report is a list in the same order.
# Mirrored objects: each mesh object reports the determinant of its world
# matrix and the fraction of its faces whose world-space normal (Blender's
# own, as it shades them) points away from the object's world-space centre
# for closed convex-ish parts; the Go side uses the first.
# Placement: each mesh object reports "box", the world-space bounding box
# (Blender's axes, Z up) of its evaluated mesh at rest (the depsgraph's,
# armature applied: where the viewport shows it), so the Go side can check
# where skinned parts land (the GEM tracks in their .vol shapes); and
# "bone_fit" gives, per armature, for each bone driving 20 or more vertices
# of its meshes at weight >= 0.9, how far those vertices' evaluated centre
# lies from the bone's head as posed (the pose bone's: the importer poses
# a mirrored bone, which an edit bone cannot be, back onto the file's rest).

import json
import sys
import traceback

import numpy

numpy.bool = bool  # Blender 3.4's importer uses the alias numpy 1.24 removed

import bpy  # noqa: E402
import mathutils  # noqa: E402


def reset():
    for coll in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.armatures,
                 bpy.data.actions, bpy.data.images, bpy.data.textures, bpy.data.node_groups,
                 bpy.data.shape_keys, bpy.data.collections):
        ids = list(coll)
        if ids:
            bpy.data.batch_remove(ids)
    bpy.data.orphans_purge(do_recursive=True)


def evaluated_vertices(ob):
    dg = bpy.context.evaluated_depsgraph_get()
    ev = ob.evaluated_get(dg)
    me = ev.to_mesh()
    vs = [ev.matrix_world @ v.co for v in me.vertices]
    ev.to_mesh_clear()
    return vs


def evaluated_box(ob):
    """Returns [min, max], the world-space bounding box of the object's
    evaluated mesh (modifiers such as the armature applied), or None for a
    mesh without vertices."""
    dg = bpy.context.evaluated_depsgraph_get()
    ev = ob.evaluated_get(dg)
    me = ev.to_mesh()
    n = len(me.vertices)
    if n == 0:
        ev.to_mesh_clear()
        return None
    co = numpy.empty(n * 3, dtype=numpy.float64)
    me.vertices.foreach_get("co", co)
    ev.to_mesh_clear()
    co = co.reshape(n, 3)
    m = numpy.array(ev.matrix_world)
    w = co @ m[:3, :3].T + m[:3, 3]
    return [[round(float(c), 5) for c in w.min(axis=0)], [round(float(c), 5) for c in w.max(axis=0)]]


def bone_fit(arm, meshes):
    """Returns, for each bone of arm that drives 20 or more vertices of
    meshes at weight >= 0.9, the distance from their evaluated world-space
    centre to the bone's posed head."""
    dg = bpy.context.evaluated_depsgraph_get()
    sums = {}
    for ob in meshes:
        names = {g.index: g.name for g in ob.vertex_groups}
        ev = ob.evaluated_get(dg)
        me = ev.to_mesh()
        n = len(me.vertices)
        if n != len(ob.data.vertices):
            ev.to_mesh_clear()
            continue  # a modifier changed the topology: indices do not match
        co = numpy.empty(n * 3, dtype=numpy.float64)
        me.vertices.foreach_get("co", co)
        ev.to_mesh_clear()
        m = numpy.array(ev.matrix_world)
        w = co.reshape(n, 3) @ m[:3, :3].T + m[:3, 3]
        for v in ob.data.vertices:
            for g in v.groups:
                if g.weight >= 0.9 and g.group in names:
                    acc = sums.setdefault(names[g.group], [numpy.zeros(3), 0])
                    acc[0] += w[v.index]
                    acc[1] += 1
    out = {}
    for name, (total, count) in sums.items():
        pb = arm.pose.bones.get(name)
        if pb is None or count < 20:
            continue
        head = numpy.array(arm.matrix_world @ pb.head)
        out[name] = round(float(numpy.linalg.norm(total / count - head)), 5)
    return out


def facing(ob):
    """Returns the fraction of faces whose shaded world-space normal (the
    polygon's, through the object's normal matrix, as Blender shades a
    mirrored object) points away from the mesh's world-space centre, and
    the fraction whose polygon normal agrees with their loops' normals
    (the file's)."""
    me = ob.data
    if not me.polygons:
        return 1.0, 1.0
    mw = ob.matrix_world
    nm = mw.to_3x3().inverted().transposed()
    centre = mathutils.Vector((0, 0, 0))
    for v in me.vertices:
        centre += v.co
    centre = mw @ (centre / len(me.vertices))
    me.calc_normals_split()
    out = agree = 0
    for p in me.polygons:
        n = nm @ p.normal
        if n.dot((mw @ p.center) - centre) > 0:
            out += 1
        ln = mathutils.Vector((0, 0, 0))
        for li in p.loop_indices:
            ln += me.loops[li].normal
        if ln.dot(p.normal) > 0:
            agree += 1
    return round(out / len(me.polygons), 4), round(agree / len(me.polygons), 4)


def deform_report(arm, meshes):
    """Rotates each bone that weights a vertex of the armature's meshes and
    returns the largest distance a vertex moved."""
    weighted = set()
    for ob in meshes:
        names = {g.index: g.name for g in ob.vertex_groups}
        for v in ob.data.vertices:
            for g in v.groups:
                if g.weight > 0 and g.group in names:
                    weighted.add(names[g.group])
    moved = {}
    rest = {ob.name: evaluated_vertices(ob) for ob in meshes}
    for name in sorted(weighted):
        pb = arm.pose.bones.get(name)
        if pb is None:
            continue
        pb.rotation_mode = 'XYZ'
        pb.rotation_euler = (0.5, 0.3, 0.2)
        bpy.context.view_layer.update()
        best = 0.0
        for ob in meshes:
            for a, b in zip(rest[ob.name], evaluated_vertices(ob)):
                best = max(best, (a - b).length)
        moved[name] = round(best, 6)
        pb.rotation_euler = (0, 0, 0)
        bpy.context.view_layer.update()
    return moved


def report(path):
    reset()
    bpy.ops.import_scene.gltf(filepath=path)
    out = {"path": path, "objects": [], "bones": [], "materials": [], "images": [], "actions": [], "deform": {}, "bone_fit": {}}
    for ob in bpy.data.objects:
        parent = ""
        if ob.parent is not None:
            parent = ob.parent_bone if ob.parent_type == 'BONE' and ob.parent_bone else ob.parent.name
        o = {"name": ob.name, "type": ob.type, "parent": parent,
             "parent_is_armature": ob.parent is not None and ob.parent.type == 'ARMATURE' and ob.parent_type != 'BONE',
             "det": round(ob.matrix_world.to_3x3().determinant(), 6),
             "location": [round(c, 5) for c in ob.matrix_world.translation]}
        if ob.type == 'MESH':
            o["materials"] = [s.material.name for s in ob.material_slots if s.material]
            o["faces"] = len(ob.data.polygons)
            o["outward"], o["normals_agree"] = facing(ob)
            arm = ob.find_armature()
            o["armature"] = arm.name if arm else ""
            o["box"] = evaluated_box(ob)
        if ob.animation_data and ob.animation_data.action:
            o["action"] = ob.animation_data.action.name
        out["objects"].append(o)
        if ob.type == 'ARMATURE':
            for b in ob.data.bones:
                out["bones"].append({"name": b.name, "parent": b.parent.name if b.parent else "", "armature": ob.name})
    out["materials"] = [m.name for m in bpy.data.materials]
    out["images"] = [{"name": im.name, "size": list(im.size)} for im in bpy.data.images]
    out["actions"] = [{"name": a.name, "fcurves": len(a.fcurves)} for a in bpy.data.actions]
    for ob in bpy.data.objects:
        if ob.type == 'ARMATURE':
            meshes = [m for m in bpy.data.objects if m.type == 'MESH' and m.find_armature() == ob]
            if meshes:
                out["bone_fit"][ob.name] = bone_fit(ob, meshes)
                out["deform"][ob.name] = deform_report(ob, meshes)
    return out


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    jobs = json.load(open(argv[0]))
    reports = []
    for path in jobs:
        try:
            reports.append(report(path))
        except Exception:
            reports.append({"path": path, "error": traceback.format_exc()})
    json.dump(reports, open(argv[1], "w"))


main()
