#!/usr/bin/env bash
# make preview: mount testdata/ and, when it is there, ../shared/assets with
# meshfs, and render every mesh's .glb the mounts show with Blender
# Workbench (headless, textures shown) into one contact sheet PNG, plus a
# small paletted copy of it for the README (docs/preview.png). MODELS=DIR
# renders the assembled models of DIR instead (LOD 0: the NAME.glb of every
# .mdl folder); the models' sheet is MODELS=../shared/assets.
#   preview.sh MESHFS_BINARY OUT_DIR
set -euo pipefail
bin=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
command -v blender >/dev/null || { echo "preview: blender not found (apt-get install --no-install-recommends blender python3-numpy)" >&2; exit 1; }
mkdir -p "$out"
srcs=("testdata=$repo/testdata")
if [ -d "$repo/../shared/assets" ]; then srcs+=("assets=$(cd "$repo/../shared/assets" && pwd)"); fi
if [ -n "${MODELS:-}" ]; then srcs=("models=$(realpath "$MODELS")"); fi
cache=$(mktemp -d /tmp/meshfs-preview-cache.XXXXXX) # never the user's real cache folder
mnts=()
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  for m in "${mnts[@]}"; do
    if mountpoint -q "$m"; then fusermount3 -u -z "$m" || true; fi
    rm -rf "$m"
  done
  rm -rf "$cache"
}
trap cleanup EXIT
args=()
for s in "${srcs[@]}"; do
  name=${s%%=*}
  src=${s#*=}
  mnt=$(mktemp -d /tmp/meshfs-preview-mnt.XXXXXX)
  mnts+=("$mnt")
  "$bin" mount --cache-dir "$cache/$name" "$src" "$mnt" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 600); do mountpoint -q "$mnt" && break; kill -0 "$pid" 2>/dev/null || exit 1; sleep 0.1; done
  mountpoint -q "$mnt" || { echo "preview: $mnt not mounted" >&2; exit 1; }
  # One tile per mesh: not the animation files' skeletons, nor the copies
  # of a mesh with its animations attached.
  while IFS= read -r glb; do
    rel=${glb#"$mnt"/}
    args+=("$name/$(dirname "$rel")=$glb")
  done < <(if [ -n "${MODELS:-}" ]; then
    find "$mnt" -path '*.mdl/*' -name '*.glb' ! -name '*.lod[0-9]*.glb' ! -name '*.collision.glb'
  else
    find "$mnt" -name '*.glb' ! -name '*.animated.glb' ! -path '*.mdl/*' \
      ! -path '*.anim/*' ! -path '*.ani/*' ! -path '*.anm/*'
  fi | sort)
done
[ ${#args[@]} -gt 0 ] || { echo "preview: no .glb files under the mounts" >&2; exit 1; }
blender -b --factory-startup -noaudio --python-exit-code 1 \
  --python "$here/blender/render_preview.py" -- "$out/contact-sheet.png" "$out/preview-small.png" "${args[@]}" \
  > "$out/blender.log" 2>&1 || { tail -30 "$out/blender.log" >&2; exit 1; }
grep '^meshfs preview' "$out/blender.log"
