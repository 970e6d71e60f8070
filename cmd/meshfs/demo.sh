#!/usr/bin/env bash
# make demo: mount the bundled sample assets (testdata/, written by the
# project's own encoders), show the tree, read one .glb from the mount
# through the Khronos validator, and unmount.
set -euo pipefail
bin=$(realpath "${1:-build/meshfs}")
root=$(cd "$(dirname "$0")/../.." && pwd)
mnt=$(mktemp -d /tmp/meshfs-demo.XXXXXX)
# A cache folder of its own: the demo never touches the user's real one.
cache=$(mktemp -d /tmp/meshfs-demo-cache.XXXXXX)
cleanup() { fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; rm -rf "$cache"; }
trap cleanup EXIT

"$bin" mount --daemon --cache-dir "$cache" "$root/testdata" "$mnt"
echo "== the mounted tree: each mesh file is a folder"
(cd "$mnt" && find . -mindepth 2 -maxdepth 2 | sort)
dir="$mnt/gem/eply_skinned_0x800.ply"
echo "== one mesh folder"
ls -l "$dir" "$dir/chunks"
glb="$dir/eply_skinned_0x800.glb"
echo "== $(basename "$glb"): $(stat -c %s "$glb") bytes, read from the mount"
node "$root/export/gltf/validator/validate.mjs" "$glb" | node -e '
  let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
    const r = JSON.parse(s.trim().split("\n")[0]);
    const i = r.info || {};
    console.log(`validator: ${r.issues.numErrors} errors, ${r.issues.numWarnings} warnings; ` +
      `${i.totalVertexCount} vertices, ${i.totalTriangleCount} triangles, ${i.animationCount} animations, ` +
      `${i.materialCount} materials, skins: ${i.hasSkins}`);
    process.exit(r.issues.numErrors ? 1 : 0);
  });'
echo "== header.json counts"
sed -n '/"counts"/,/}/p' "$mnt/gem/eply_skinned_0x800.ply/header.json"
echo "== stats"
cat "$mnt/.meshfs/stats.json" | head -30
