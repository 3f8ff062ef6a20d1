// Package pgfault is a TCP proxy between PostgreSQL clients and a server
// that injects the faults networks and servers cause: a connection reset
// as it is made, a reset in the middle of a result, and a black hole that
// keeps connections open and forwards nothing. Tests put it between
// informe and a real PostgreSQL to check what informe tells its clients,
// its log and its metrics when the database fails; informe itself never
// uses it.
//
// It reads the server's side of the protocol message by message, so it
// needs connections without TLS (sslmode=disable).
package pgfault

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
)

// Fault is what the proxy does to connections.
type Fault int

// The faults.
const (
	// Pass forwards everything.
	Pass Fault = iota
	// ResetAtConnect resets every open connection at once, and every new
	// one as soon as its client has sent its startup packet, before the
	// server is dialled.
	ResetAtConnect
	// ResetAtRow resets a connection when the server sends it a data row
	// of at least [Proxy.Arm]'s fields, instead of forwarding the row:
	// the client has every message before it, and nothing after.
	ResetAtRow
	// BlackHole forwards nothing more, either way, on open connections
	// and on new ones, which are accepted and never answered; the sockets
	// stay open. Leaving it resets the connections it held.
	BlackHole
)

func (f Fault) String() string {
	switch f {
	case Pass:
		return "pass"
	case ResetAtConnect:
		return "reset at connect"
	case ResetAtRow:
		return "reset at a data row"
	case BlackHole:
		return "black hole"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Proxy is a fault-injecting proxy listening on a loopback port.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu        sync.Mutex
	fault     Fault
	minFields int
	links     map[*link]struct{}
	resets    int
	closed    bool

	wg sync.WaitGroup
}

// link is one client's connection and, unless it was black-holed from the
// start, its connection to the server.
type link struct {
	client, server net.Conn
	held           bool // black-holed: no byte forwarded since
}

// Start returns a proxy that forwards to upstream (host:port), faultless
// until [Proxy.Set] or [Proxy.Arm] says otherwise. Close it.
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns the PostgreSQL URL dbURL with its host and port replaced by
// the proxy's, so that a client of it connects through the proxy.
func (p *Proxy) URL(dbURL string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	u.Host = p.Addr()
	return u.String(), nil
}

// Set makes the proxy do f from now on; for ResetAtRow, see [Proxy.Arm].
func (p *Proxy) Set(f Fault) { p.Arm(f, 1) }

// Arm makes the proxy do f from now on, with ResetAtRow resetting at the
// first data row of at least minFields fields (results of fewer columns,
// such as a count or a token's lookup, pass). Entering ResetAtConnect
// resets the connections open now; leaving BlackHole resets those it
// held, whose protocol state is lost.
func (p *Proxy) Arm(f Fault, minFields int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault, p.minFields = f, minFields
	for l := range p.links {
		if f == ResetAtConnect || (f != BlackHole && l.held) {
			p.resetLocked(l)
		} else if f == BlackHole {
			l.held = true
		}
	}
}

// Resets returns how many connections the proxy has reset.
func (p *Proxy) Resets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resets
}

// Close stops the proxy and closes every connection it holds.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.links {
		p.closeLocked(l)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve runs one client connection until either side ends it.
func (p *Proxy) serve(c net.Conn) {
	l := &link{client: c}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return
	}
	fault := p.fault
	l.held = fault == BlackHole
	p.links[l] = struct{}{}
	p.mu.Unlock()
	defer p.drop(l)

	switch fault {
	case ResetAtConnect:
		// The startup packet: its length, then the rest.
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err == nil {
			_, _ = io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))-4)
		}
		p.mu.Lock()
		p.resetLocked(l)
		p.mu.Unlock()
		return
	case BlackHole:
		// Read and drop whatever comes until the connection ends.
		_, _ = io.Copy(io.Discard, c)
		return
	}
	s, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	p.mu.Lock()
	l.server = s
	if p.closed {
		p.closeLocked(l)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.toServer(l)
	}()
	p.toClient(l)
	p.mu.Lock()
	p.closeLocked(l)
	p.mu.Unlock()
	<-done
}

// toServer forwards the client's bytes, as they come, unless held.
func (p *Proxy) toServer(l *link) {
	buf := make([]byte, 32<<10)
	for {
		n, err := l.client.Read(buf)
		if n > 0 && !p.holding(l) {
			if _, werr := l.server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			p.mu.Lock()
			p.closeLocked(l)
			p.mu.Unlock()
			return
		}
	}
}

// toClient forwards the server's messages, one at a time, unless held or
// one of them is the data row that ResetAtRow resets the link at.
func (p *Proxy) toClient(l *link) {
	r := bufio.NewReaderSize(l.server, 64<<10)
	w := bufio.NewWriterSize(l.client, 64<<10)
	var msg []byte
	for {
		// A message: its type, its length (itself included), the rest.
		head, err := r.Peek(5)
		if err != nil {
			return
		}
		n := 1 + int(binary.BigEndian.Uint32(head[1:5]))
		if n < 5 {
			return // not PostgreSQL's protocol
		}
		if cap(msg) < n {
			msg = make([]byte, n)
		}
		msg = msg[:n]
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		if p.holding(l) {
			continue
		}
		if msg[0] == 'D' && n >= 7 && p.resetsAt(l, int(binary.BigEndian.Uint16(msg[5:7]))) {
			return
		}
		if _, err := w.Write(msg); err != nil {
			return
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// holding reports whether l is black-holed.
func (p *Proxy) holding(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.held
}

// resetsAt reports whether a data row of fields columns resets l, and
// resets it if so.
func (p *Proxy) resetsAt(l *link, fields int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fault != ResetAtRow || fields < p.minFields {
		return false
	}
	p.resetLocked(l)
	return true
}

// resetLocked ends l with a TCP reset to its client, and closes its
// server side. The caller holds p.mu.
func (p *Proxy) resetLocked(l *link) {
	if tc, ok := l.client.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close sends RST, not FIN
	}
	p.resets++
	p.closeLocked(l)
}

// closeLocked closes both of l's connections; safe to repeat. The caller
// holds p.mu.
func (p *Proxy) closeLocked(l *link) {
	_ = l.client.Close()
	if l.server != nil {
		_ = l.server.Close()
	}
}

// drop forgets l once its goroutines are done with it.
func (p *Proxy) drop(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked(l)
	delete(p.links, l)
}
