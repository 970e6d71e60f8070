package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAptGet stands in for Debian's apt-get: it logs each install and puts
// the installed programs on PATH as Debian's packages would (nodejs brings
// node but no npm). Asking for npm where an npm is already on PATH fails
// as apt does when Node.js bundles its own npm.
const fakeAptGet = `#!/bin/bash
[ "$1" = update ] && exit 0
shift; args=()
for a in "$@"; do case $a in -*) ;; *) args+=("$a");; esac; done
echo "${args[*]}" >> "$LOG"
for p in "${args[@]}"; do
  case $p in
  fuse3) tool=fusermount3;; nodejs) tool=node;; npm) tool=npm;;
  blender) tool=blender;; assimp-utils) tool=assimp;; *) continue;;
  esac
  if [ "$p" = npm ] && [ -e "$BIN/npm" ]; then
    echo "npm : Conflicts: nodejs but it is to be installed; held broken packages" >&2; exit 100
  fi
  printf '#!/bin/bash\necho v0\n' > "$BIN/$tool"; /bin/chmod +x "$BIN/$tool"
done
`

// TestSetupScript runs the README's first step (.ci/setup) against a fake
// apt-get on a PATH holding only what the case has, and checks what it asks
// apt for.
func TestSetupScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../.ci/setup")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		have    []string // programs on PATH before
		clients bool
		want    []string // apt-get install lines, in order
	}{
		{"fresh Debian", nil, false, []string{"fuse3 nodejs", "npm"}},
		{"Node.js bundles npm", []string{"node", "npm"}, false, []string{"fuse3"}},
		{"everything there", []string{"node", "npm", "fusermount3"}, false, nil},
		{"Debian Node.js without npm", []string{"node", "fusermount3"}, false, []string{"npm"}},
		{"CI clients", []string{"node", "npm", "fusermount3"}, true, []string{"blender python3-numpy assimp-utils rclone davfs2 nginx curl chromium"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			log := filepath.Join(t.TempDir(), "apt.log")
			for _, p := range tc.have {
				os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/bash\necho v0\n"), 0o755)
			}
			os.WriteFile(filepath.Join(bin, "apt-get"), []byte(fakeAptGet), 0o755)
			cmd := exec.Command(bash, script)
			cmd.Env = []string{"PATH=" + bin, "LOG=" + log, "BIN=" + bin}
			if tc.clients {
				cmd.Env = append(cmd.Env, "CLIENTS=1")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("setup failed: %v\n%s", err, out)
			}
			b, _ := os.ReadFile(log)
			var lines []string
			if len(b) > 0 {
				lines = strings.Split(strings.TrimSpace(string(b)), "\n")
			}
			if strings.Join(lines, "|") != strings.Join(tc.want, "|") {
				t.Errorf("apt-get install calls %q, want %q\n%s", lines, tc.want, out)
			}
			if !strings.Contains(string(out), "ready") {
				t.Errorf("no ready line:\n%s", out)
			}
		})
	}
}
