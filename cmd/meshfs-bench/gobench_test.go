package main

import "testing"

// TestPairedMS reads serve's paired sub-benchmarks as go test prints them.
func TestPairedMS(t *testing.T) {
	out := "BenchmarkWarmGET/meshfs-vs-nginx-2         	       2	     29269 meshfs-µs/op	     31671 nginx-µs/op	         0.9242 ×nginx\n" +
		"BenchmarkPropfind1000/meshes/meshfs-vs-rclone-2         	       2	      9912 meshfs-µs/op	     19119 rclone-µs/op	         0.5185 ×rclone\n"
	runs := []map[string]benchResult{parseBench(out)}
	for _, c := range []struct {
		name, side string
		want       float64
	}{
		{"BenchmarkWarmGET/meshfs-vs-nginx", "meshfs", 29.269},
		{"BenchmarkWarmGET/meshfs-vs-nginx", "nginx", 31.671},
		{"BenchmarkPropfind1000/meshes/meshfs-vs-rclone", "rclone", 19.119},
	} {
		got := pairedMS(runs, c.name, c.side)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("pairedMS(%s, %s) = %v, want [%v]", c.name, c.side, got, c.want)
		}
	}
}
