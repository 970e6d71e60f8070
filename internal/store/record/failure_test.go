package record

import (
	"errors"
	"testing"
)

func TestFailureRecord(t *testing.T) {
	err, ok := DecodeFailure(EncodeFailure(errors.New("m.gem: offset 4: bad magic")))
	if !ok || err.Error() != "m.gem: offset 4: bad magic" {
		t.Fatalf("round trip: %v, %v", err, ok)
	}
	for _, b := range [][]byte{nil, {}, {0}, {2, 'x'}} {
		if _, ok := DecodeFailure(b); ok {
			t.Errorf("%q decoded as a failure", b)
		}
	}
}
