//go:build race

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// raceBuilt: this test binary has the race detector, so the daemon it
// builds gets it too.
const raceBuilt = true

// TestDaemonRaceBuilt: under make test-race the daemon the tests start is
// race-built, and a data race in a child built the same way fails the test
// that started it.
func TestDaemonRaceBuilt(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", meshfsBin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", meshfsBin, err)
	}
	if !strings.Contains(string(out), "-race=true") {
		t.Errorf("%s is built without -race:\n%s", meshfsBin, out)
	}

	// A planted race: two goroutines write one variable unsynchronised.
	dir := t.TempDir()
	const racy = `package main

import "fmt"

func main() {
	n := 0
	done := make(chan bool)
	go func() { n++; done <- true }()
	n++
	<-done
	fmt.Println(n)
}
`
	if err := os.WriteFile(filepath.Join(dir, "racy.go"), []byte(racy), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "racy")
	build := exec.Command("go", buildArgs(bin, "racy.go")...)
	build.Dir = dir
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the planted race: %v\n%s", err, b)
	}
	cmd := exec.Command(bin)
	err = cmd.Run()
	report, ok := raceReport(cmd.Process.Pid)
	if !ok || !strings.Contains(report, "WARNING: DATA RACE") {
		t.Errorf("the planted race was not reported (exit %v): %q", err, report)
	}
	if ee, isExit := err.(*exec.ExitError); !isExit || ee.ExitCode() != 66 {
		t.Errorf("the planted race's program exited with %v, want status 66", err)
	}
}
