package serve

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// Auth is who may use the door, read from a file (LoadAuth) of lines:
//
//	# a comment
//	TOKEN            a bearer token: "Authorization: Bearer TOKEN"
//	USER:PASSWORD    basic auth, accepted over TLS only
//
// Every credential is compared in constant time.
type Auth struct {
	tokens [][sha256.Size]byte
	users  map[string][sha256.Size]byte
}

// LoadAuth reads the auth file at path. The file must be readable by its
// owner alone (it holds secrets) and name at least one credential.
func LoadAuth(path string) (*Auth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("--auth %s: readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	a := &Auth{users: map[string][sha256.Size]byte{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if user, pass, ok := strings.Cut(line, ":"); ok {
			if user == "" || pass == "" {
				return nil, fmt.Errorf("--auth %s:%d: USER:PASSWORD with an empty user or password", path, n)
			}
			a.users[user] = sha256.Sum256([]byte(pass))
			continue
		}
		if len(line) < 16 {
			return nil, fmt.Errorf("--auth %s:%d: a token of %d characters: give at least 16", path, n, len(line))
		}
		a.tokens = append(a.tokens, sha256.Sum256([]byte(line)))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--auth %s: %w", path, err)
	}
	if len(a.tokens) == 0 && len(a.users) == 0 {
		return nil, fmt.Errorf("--auth %s: no token and no USER:PASSWORD line", path)
	}
	return a, nil
}

// HasPasswords reports whether the file gave USER:PASSWORD lines.
func (a *Auth) HasPasswords() bool { return len(a.users) > 0 }

// admits reports whether r carries a credential of a.
func (a *Auth) admits(r *http.Request, tls bool) bool {
	h := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		found := 0
		for _, t := range a.tokens {
			found |= subtle.ConstantTimeCompare(sum[:], t[:])
		}
		return found == 1
	}
	user, pass, ok := r.BasicAuth()
	if !ok || !tls {
		return false
	}
	want, known := a.users[user]
	sum := sha256.Sum256([]byte(pass))
	return subtle.ConstantTimeCompare(sum[:], want[:]) == 1 && known
}

// challenge sets the WWW-Authenticate headers of a 401.
func (a *Auth) challenge(w http.ResponseWriter, tls bool) {
	if tls && len(a.users) > 0 {
		w.Header().Add("WWW-Authenticate", `Basic realm="meshfs", charset="UTF-8"`)
	}
	if len(a.tokens) > 0 {
		w.Header().Add("WWW-Authenticate", `Bearer realm="meshfs"`)
	}
}

// CheckListen keeps the door's start-up rules: an address other than a
// loopback one needs auth; passwords need TLS (basic auth would send them
// in the clear); TLS needs both a certificate and a key.
func CheckListen(addr string, auth *Auth, cert, key string) error {
	if (cert == "") != (key == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if auth != nil && auth.HasPasswords() && cert == "" {
		return errors.New("--auth: USER:PASSWORD lines need --tls-cert and --tls-key (basic auth over plain HTTP sends the password in the clear); use a token line instead")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	if !Loopback(host) && auth == nil {
		return fmt.Errorf("--listen %s is reachable from other machines: give --auth FILE (a token, or USER:PASSWORD with --tls-cert/--tls-key), or listen on 127.0.0.1", addr)
	}
	return nil
}

// Loopback reports whether host (of a listen address) is this machine
// only: "localhost" or a loopback IP. An empty host is every interface.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
