package main

import (
	"fmt"
	"strconv"
	"strings"
)

// Every size meshfs takes (--cache-size, --disk-cache-size, -o cache_size,
// --max-source-size, --max-output-size) is read by parseSize, in binary
// units: K, KB and KiB all mean 1024 bytes, M, MB and MiB 1024², and so on.

// sizeUnits are the suffixes parseSize knows, longest first.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// maxSize bounds a size, so that sums of sizes cannot overflow.
const maxSize = 1 << 62

// parseSize reads a size in bytes: a whole or decimal number ("1048576",
// "1.5GiB", "512 MiB"), with an optional binary unit (see sizeUnits,
// case-insensitive); a fraction of a byte is dropped.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	whole, frac, hasFrac := strings.Cut(t, ".")
	if !digits(whole) || (hasFrac && !digits(frac)) {
		return 0, fmt.Errorf("%q is not a size in bytes (like 1048576, 512MiB or 2GiB; units are binary, MB = MiB)", s)
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n > maxSize/mult {
		return 0, fmt.Errorf("%q is too big a size", s)
	}
	size := n * mult
	if hasFrac {
		f, _ := strconv.ParseFloat("0."+frac, 64)
		size += int64(f * float64(mult))
	}
	return size, nil
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// byteSize is a flag value in bytes read by parseSize.
type byteSize int64

func (s *byteSize) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = byteSize(n)
	return nil
}

// String is the size in the largest binary unit that divides it.
func (s *byteSize) String() string {
	n := int64(*s)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

func (s *byteSize) Type() string { return "size" }
