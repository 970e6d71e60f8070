#!/usr/bin/env bash
# make preview: mount testdata/ with meshfs, render every .glb the mount shows
# with Blender Workbench (headless) into one contact sheet PNG (MODELS=DIR:
# the assembled models of DIR).
#   preview.sh MESHFS_BINARY OUT_DIR
set -euo pipefail
bin=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../testdata" && pwd)
# MODELS=DIR renders the models of DIR instead (LOD 0, NAME.glb, of every
# .mdl folder): the models' sheet is MODELS=../shared/assets.
if [ -n "${MODELS:-}" ]; then src=$(realpath "$MODELS"); fi
command -v blender >/dev/null || { echo "preview: blender not found (apt-get install --no-install-recommends blender python3-numpy)" >&2; exit 1; }
mkdir -p "$out"
mnt=$(mktemp -d /tmp/meshfs-preview-mnt.XXXXXX)
cache=$(mktemp -d /tmp/meshfs-preview-cache.XXXXXX) # never the user's real cache folder
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if mountpoint -q "$mnt"; then fusermount3 -u -z "$mnt" || true; fi
  rm -rf "$mnt" "$cache"
}
trap cleanup EXIT
"$bin" mount --cache-dir "$cache" "$src" "$mnt" &
pid=$!
for _ in $(seq 600); do mountpoint -q "$mnt" && break; kill -0 "$pid" 2>/dev/null || exit 1; sleep 0.1; done
mountpoint -q "$mnt" || { echo "preview: $mnt not mounted" >&2; exit 1; }
args=()
while IFS= read -r glb; do
  rel=${glb#"$mnt"/}
  args+=("$(dirname "$rel")=$glb")
done < <(if [ -n "${MODELS:-}" ]; then
  find "$mnt" -path '*.mdl/*' -name '*.glb' ! -name '*.lod[0-9]*.glb' ! -name '*.collision.glb'
else
  find "$mnt" -name '*.glb'
fi | sort)
[ ${#args[@]} -gt 0 ] || { echo "preview: no .glb files under $mnt" >&2; exit 1; }
blender -b --factory-startup -noaudio --python-exit-code 1 \
  --python "$here/blender/render_preview.py" -- "$out/contact-sheet.png" "${args[@]}" \
  > "$out/blender.log" 2>&1 || { tail -30 "$out/blender.log" >&2; exit 1; }
grep '^meshfs preview' "$out/blender.log"
