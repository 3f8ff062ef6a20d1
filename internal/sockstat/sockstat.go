// Package sockstat reads the send side of a TCP connection from the kernel:
// how many bytes its send buffer can take now without blocking, and how
// many its peer has acknowledged. The spool uses them to pass bytes
// straight through while a client keeps up, and to tell a slow client from
// a stalled one by what it accepts rather than by how long a write blocks.
//
// Both are Linux's (SIOCOUTQ, SO_SNDBUF and TCP_INFO); elsewhere a [Conn]
// reports no room, so that every byte goes through the spool, and no
// progress, so that a write that completes is the only progress.
package sockstat

import (
	"crypto/tls"
	"net"
	"syscall"
)

// Conn is a TCP connection whose send side can be read.
type Conn struct {
	raw syscall.RawConn
}

// New returns the [Conn] of c, looking through TLS, or nil when c is not a
// TCP connection.
func New(c net.Conn) *Conn {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return nil
	}
	return &Conn{raw: raw}
}

// Room returns how many bytes a write could hand to the kernel now without
// blocking: a conservative reading, half of the send buffer (the kernel
// counts its own overhead against it too) less what is queued in it. It
// returns 0 when it cannot tell.
func (c *Conn) Room() int {
	n := 0
	_ = c.raw.Control(func(fd uintptr) { n = room(int(fd)) })
	return n
}

// Acked returns how many bytes the peer has acknowledged since the
// connection opened: it moves only when the client's side accepts data, so
// a client that stopped reading (its window closed) leaves it still.
func (c *Conn) Acked() (int64, error) {
	var n int64
	var err error
	if cerr := c.raw.Control(func(fd uintptr) { n, err = acked(int(fd)) }); cerr != nil {
		return 0, cerr
	}
	return n, err
}
