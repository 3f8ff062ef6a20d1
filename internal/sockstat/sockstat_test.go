package sockstat_test

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/informe/informe/internal/sockstat"
)

// TestRoomAndAcked checks the readings on a real loopback connection: room
// shrinks while the peer reads nothing and comes back once it reads, and
// the acknowledged count follows what the peer's kernel accepted.
func TestRoomAndAcked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's readings are Linux's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	defer server.Close()
	s := sockstat.New(server)
	if s == nil {
		t.Fatal("New returned nil for a TCP connection")
	}
	if s.Room() <= 0 {
		t.Fatalf("Room = %d on an idle connection, want > 0", s.Room())
	}
	// Fill both kernels' buffers: the client reads nothing.
	_ = server.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
	var sent int64
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Write(buf)
		sent += int64(n)
		if err != nil {
			break
		}
	}
	_ = server.SetWriteDeadline(time.Time{})
	if r := s.Room(); r != 0 {
		t.Errorf("Room = %d with the send buffer full, want 0", r)
	}
	a1, err := s.Acked()
	if err != nil {
		t.Fatal(err)
	}
	if a1 <= 0 || a1 > sent {
		t.Fatalf("Acked = %d after %d bytes sent, want in (0, sent]", a1, sent)
	}
	time.Sleep(50 * time.Millisecond)
	if a2, _ := s.Acked(); a2 != a1 {
		t.Errorf("Acked moved from %d to %d while the client read nothing", a1, a2)
	}
	if _, err := io.ReadFull(client, make([]byte, sent)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		a3, _ := s.Acked()
		if a3 == sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Acked = %d after the client read all %d bytes", a3, sent)
		}
		time.Sleep(time.Millisecond)
	}
	if s.Room() <= 0 {
		t.Errorf("Room = %d once the client read everything, want > 0", s.Room())
	}
}

func TestNotTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if s := sockstat.New(a); s != nil {
		t.Errorf("New(pipe) = %v, want nil", s)
	}
}
