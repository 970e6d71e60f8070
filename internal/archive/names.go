package archive

import (
	"errors"
	"hash/crc32"
	"strings"
	"unicode/utf8"
)

// Name limits: those of Linux (NAME_MAX, PATH_MAX).
const (
	maxComponent = 255
	maxPath      = 4096
)

// cp437 is code page 437's upper half, U+0080 onwards by byte 0x80.
const cp437 = "ÇüéâäàåçêëèïîìÄÅ" + "ÉæÆôöòûùÿÖÜ¢£¥₧ƒ" + "áíóúñÑªº¿⌐¬½¼¡«»" + "░▒▓│┤╡╢╖╕╣║╗╝╜╛┐" +
	"└┴┬├─┼╞╟╚╔╩╦╠═╬╧" + "╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀" + "αßΓπΣσµτΦΘΩδ∞φε∩" + "≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0"

var cp437Runes = []rune(cp437)

// decodeCP437 turns a name in code page 437 into UTF-8.
func decodeCP437(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) * 2)
	for _, c := range b {
		if c < 0x80 {
			sb.WriteByte(c)
		} else {
			sb.WriteRune(cp437Runes[c-0x80])
		}
	}
	return sb.String()
}

// flagUTF8 is general purpose flag bit 11: the name and comment are UTF-8.
const flagUTF8 = 1 << 11

// extraUnicodePath is the Info-ZIP Unicode Path extra field.
const extraUnicodePath = 0x7075

// decodeName gives the UTF-8 form of a stored name by the package's rule:
// UTF-8 when flag bit 11 says so, else the Unicode Path field when its CRC
// matches the stored name, else CP437.
func decodeName(raw []byte, flags uint16, extra []byte) (string, error) {
	if flags&flagUTF8 != 0 {
		if !utf8.Valid(raw) {
			return "", errors.New("the name is flagged UTF-8 but is not")
		}
		return string(raw), nil
	}
	if f := extraField(extra, extraUnicodePath); len(f) >= 5 && f[0] == 1 {
		if le32(f[1:]) == crc32.ChecksumIEEE(raw) && utf8.Valid(f[5:]) {
			return string(f[5:]), nil
		}
	}
	return decodeCP437(raw), nil
}

// cleanName turns a decoded name into the slash-separated path the tree
// shows, and whether it names a folder, or refuses it (see the package
// documentation, Names).
func cleanName(name string) (p string, dir bool, err error) {
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", false, errors.New("the name holds a control character")
		}
	}
	name = strings.ReplaceAll(name, `\`, "/")
	if strings.HasPrefix(name, "/") {
		return "", false, errors.New("the name is absolute")
	}
	if len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z') {
		return "", false, errors.New("the name starts with a drive letter")
	}
	dir = strings.HasSuffix(name, "/")
	drop := false // whether some component is empty or "."
	for rest := name; ; {
		c, more, found := strings.Cut(rest, "/")
		switch {
		case c == "" || c == ".":
			drop = drop || found || c == "."
		case c == "..":
			return "", false, errors.New(`the name has a ".." component`)
		case len(c) > maxComponent:
			return "", false, errors.New("a component of the name is longer than 255 bytes")
		}
		if !found {
			break
		}
		rest = more
	}
	p = strings.TrimSuffix(name, "/")
	if drop {
		kept := []string{}
		for _, c := range strings.Split(name, "/") {
			if c != "" && c != "." {
				kept = append(kept, c)
			}
		}
		p = strings.Join(kept, "/")
	}
	if p == "" {
		return "", false, errors.New("the name is empty")
	}
	if len(p) > maxPath {
		return "", false, errors.New("the name is longer than 4096 bytes")
	}
	return p, dir, nil
}

// splitPath gives a tree path's folder ("" at the top) and base name.
func splitPath(p string) (dir, base string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// extraField returns the data of the first field of id in an extra block.
func extraField(extra []byte, id uint16) []byte {
	for len(extra) >= 4 {
		tag, n := le16(extra), int(le16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			return nil
		}
		if tag == id {
			return extra[:n]
		}
		extra = extra[n:]
	}
	return nil
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }
