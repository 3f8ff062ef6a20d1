package pgserver

import (
	"context"
	"net"
	"os"
	"testing"
)

// TestStartPortTaken checks that a server whose picked port was taken
// before postgres bound it (here by a listener the test holds) starts on
// another picked port instead of failing.
func TestStartPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	picks := 0
	pickPort = func() (int, error) {
		if picks++; picks == 1 {
			return taken, nil
		}
		return freePort()
	}
	defer func() { pickPort = freePort }()

	dir, err := os.MkdirTemp("", "informe-pgserver-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatalf("Start with the first picked port taken: %v", err)
	}
	defer s.Close()
	if picks != 2 || s.Port() == taken {
		t.Errorf("port %d after %d picks; want a second pick, not the taken %d", s.Port(), picks, taken)
	}
}
