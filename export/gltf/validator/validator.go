// Package validator runs the Khronos glTF validator (npm gltf-validator,
// pinned by package.json and package-lock.json in this folder) on .glb bytes
// and returns its report. The validator is a node program; `make validator`
// (npm ci in this folder) installs it into node_modules here.
//
// Tests use Check, which fails the test on any validator error; without an
// installed validator it only logs that, so the rest of the test still runs
// (unless the environment variable CI is set, where a missing validator is a
// failure). A test whose subject is the validator's report calls Need first.
package validator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Report is the part of the validator's JSON report that meshfs reads.
type Report struct {
	URI              string `json:"uri"`
	MimeType         string `json:"mimeType"`
	ValidatorVersion string `json:"validatorVersion"`
	Issues           Issues `json:"issues"`
	Info             Info   `json:"info"`
	// Fatal is set (by validate.mjs) when the validator could not parse the
	// input at all; the other fields are then empty.
	Fatal string `json:"fatal,omitempty"`
}

// Issues counts and lists the messages.
type Issues struct {
	NumErrors   int       `json:"numErrors"`
	NumWarnings int       `json:"numWarnings"`
	NumInfos    int       `json:"numInfos"`
	NumHints    int       `json:"numHints"`
	Messages    []Message `json:"messages"`
	Truncated   bool      `json:"truncated"`
}

// Severity levels of a message, as the validator numbers them.
const (
	SeverityError   = 0
	SeverityWarning = 1
	SeverityInfo    = 2
	SeverityHint    = 3
)

// Message is one issue.
type Message struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Severity int    `json:"severity"`
	Pointer  string `json:"pointer,omitempty"`
	Offset   *int64 `json:"offset,omitempty"`
}

func (m Message) String() string {
	where := m.Pointer
	if m.Offset != nil {
		where = fmt.Sprintf("offset %d", *m.Offset)
	}
	return fmt.Sprintf("%s %s at %s: %s", severityName(m.Severity), m.Code, where, m.Message)
}

func severityName(s int) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return fmt.Sprintf("severity%d", s)
}

// Info is the validator's summary of the asset.
type Info struct {
	Version            string `json:"version"`
	Generator          string `json:"generator"`
	AnimationCount     int    `json:"animationCount"`
	MaterialCount      int    `json:"materialCount"`
	HasMorphTargets    bool   `json:"hasMorphTargets"`
	HasSkins           bool   `json:"hasSkins"`
	HasTextures        bool   `json:"hasTextures"`
	HasDefaultScene    bool   `json:"hasDefaultScene"`
	DrawCallCount      int    `json:"drawCallCount"`
	TotalVertexCount   int    `json:"totalVertexCount"`
	TotalTriangleCount int    `json:"totalTriangleCount"`
	MaxUVs             int    `json:"maxUVs"`
	MaxInfluences      int    `json:"maxInfluences"`
	MaxAttributes      int    `json:"maxAttributes"`
}

// Codes returns the distinct message codes of the given severity, in order
// of first appearance.
func (r *Report) Codes(severity int) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range r.Issues.Messages {
		if m.Severity == severity && !seen[m.Code] {
			seen[m.Code] = true
			out = append(out, m.Code)
		}
	}
	return out
}

// ErrNotInstalled is returned when node or the validator's node_modules is
// missing.
var ErrNotInstalled = errors.New("glTF validator not installed (run `make validator`)")

// Dir is the folder holding validate.mjs and node_modules. It is found from
// this source file's location, or from MESHFS_VALIDATOR_DIR when set.
func Dir() string {
	if d := os.Getenv("MESHFS_VALIDATOR_DIR"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Dir(file)
}

// Available reports whether the validator can run, and why not.
func Available() error {
	dir := Dir()
	if dir == "" {
		return ErrNotInstalled
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "gltf-validator", "package.json")); err != nil {
		return fmt.Errorf("%w: %s missing", ErrNotInstalled, filepath.Join(dir, "node_modules"))
	}
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("%w: node not on PATH", ErrNotInstalled)
	}
	return nil
}

// Validate validates one .glb given as bytes.
func Validate(glb []byte) (*Report, error) {
	f, err := os.CreateTemp("", "meshfs-validate-*.glb")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(glb); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	rs, err := ValidateFiles(f.Name())
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// ValidateFiles validates every named file in one node process (starting
// node and the validator costs about a third of a second, so callers with
// many files should batch them). The reports are in argument order; a file
// the validator could not read at all has Fatal set.
func ValidateFiles(paths ...string) ([]*Report, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if err := Available(); err != nil {
		return nil, err
	}
	args := append([]string{filepath.Join(Dir(), "validate.mjs")}, paths...)
	cmd := exec.Command("node", args...)
	cmd.Dir = Dir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node validate.mjs: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var reports []*Report
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		r := new(Report)
		if err := json.Unmarshal(line, r); err != nil {
			return nil, fmt.Errorf("validator report %d: %w", len(reports), err)
		}
		reports = append(reports, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(reports) != len(paths) {
		return nil, fmt.Errorf("validator printed %d reports for %d files", len(reports), len(paths))
	}
	return reports, nil
}

// Check validates glb in a test: it fails the test when the validator
// reports any error (printing every message), logs warnings, and returns the
// report. Without an installed validator only this check is left out: it
// logs that and returns nil, and the test goes on; when the environment
// variable CI is set it fails the test instead (CI must never silently go
// without it).
func Check(t testing.TB, glb []byte) *Report {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("glTF validator required in CI: %v", err)
		}
		t.Logf("not validated: %v", err)
		return nil
	}
	r, err := Validate(glb)
	if err != nil {
		t.Fatalf("glTF validator: %v", err)
	}
	CheckReport(t, r)
	return r
}

// Need is for a test whose subject is the validator's report (its
// warnings, its counts): without an installed validator it skips the
// test, or fails it when the environment variable CI is set.
func Need(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("glTF validator required in CI: %v", err)
		}
		t.Skipf("needs the glTF validator: %v", err)
	}
}

// CheckReport fails the test when r has a fatal error or any validator
// error, and logs its warnings.
func CheckReport(t testing.TB, r *Report) {
	t.Helper()
	if r.Fatal != "" {
		t.Fatalf("glTF validator could not read %s: %s", r.URI, r.Fatal)
	}
	if r.Issues.NumErrors > 0 {
		var b strings.Builder
		for _, m := range r.Issues.Messages {
			if m.Severity <= SeverityWarning {
				b.WriteString("\n  " + m.String())
			}
		}
		t.Errorf("glTF validator: %d errors, %d warnings:%s", r.Issues.NumErrors, r.Issues.NumWarnings, b.String())
		return
	}
	for _, m := range r.Issues.Messages {
		if m.Severity == SeverityWarning {
			t.Logf("glTF validator: %s", m)
		}
	}
}
