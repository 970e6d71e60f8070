package main

import "testing"

// TestOverlayOption: --overlay is a mount flag, and -o overlay sets it too.
func TestOverlayOption(t *testing.T) {
	if f := newMountCmd().Flags().Lookup("overlay"); f == nil || f.DefValue != "false" {
		t.Fatalf("mount --overlay: %v", f)
	}
	o := &mountOpts{options: []string{"ro,overlay"}}
	if err := o.parseOptions(); err != nil || !o.overlay {
		t.Errorf("-o ro,overlay: overlay %v, %v", o.overlay, err)
	}
}
