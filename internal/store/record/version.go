package record

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/meshfs/meshfs/export/outputs"
)

// ConverterVersion is part of every disk cache key: bump it whenever the
// bytes of any converted output change (a decoder or exporter fix), so a
// cache written by an older converter is never served.
const ConverterVersion = 3

// KeyVersion is part of every disk cache key too: bump it whenever what
// a key is derived from changes (the mount's diskKey), so an entry keyed
// the old way is never found by a new key that happens to match.
const KeyVersion = 3

// CacheVersion is the version string disk cache entries are keyed by:
// the converter version, the build (Build) and the options that shape
// outputs.
func CacheVersion(build string, limits outputs.Limits) string {
	return fmt.Sprintf("converter %d keys %d build %q limits %d/%d/%v/%d/%d preview %d", ConverterVersion, KeyVersion, build,
		limits.MaxSourceSize, limits.MaxOutputSize, limits.Timeout,
		limits.MaxTexturePixels, limits.MaxTexturePixelsTotal, limits.PreviewSize)
}

// Build names the running build for CacheVersion: module version and VCS
// revision; for a build from a modified tree (or without VCS
// information), a hash of the executable, since its outputs may differ
// from the revision's. It reads the executable whole: the caller that
// makes the stores computes it once and passes it in their Config
// (store.Config.Build).
func Build() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Path + "@" + bi.Main.Version
	modified := true // no VCS information: treat as modified
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " rev " + s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		v += " exe " + exeHash()
	}
	return v
}

// exeHash is a hash of the running executable's bytes.
func exeHash() string {
	p, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(p)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
