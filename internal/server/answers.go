package server

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync/atomic"
)

// ownHeaders are the header fields added to the answers net/http writes
// itself, as every answer of informe carries them.
const ownHeaders = "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"

// answerOwn makes the answers that net/http writes on its own, before any
// handler runs, carry [ownHeaders]: the 400 of a malformed request line or
// Host, 501 (a transfer coding it does not know), 505, 417 (an Expect other
// than 100-continue), the 431 of a request line and header fields past
// srv.MaxHeaderBytes, and the 200 of OPTIONS *. net/http writes them
// straight to the connection, with no hook, so the connection's writes are
// watched: a write that starts a response while no handler has started on
// the connection since its last response is one of net/http's own, and
// gets the fields after its status line; every other write passes as it
// is. It installs srv's ConnContext (the connection seen by the one
// already set is the TCP connection beneath), ConnState and Handler, and
// returns the listener to serve srv on.
//
// It serves plain HTTP only: net/http must hold a TLS connection as its own
// type (for the handshake, HTTP/2 and the request's TLS state), so over
// HTTPS there is nowhere between to add the fields.
func answerOwn(srv *http.Server, ln net.Listener) net.Listener {
	next, h := srv.ConnContext, srv.Handler
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if ac, ok := c.(*answerConn); ok {
			ctx = context.WithValue(ctx, answerKey{}, ac)
			c = ac.Conn
		}
		if next != nil {
			ctx = next(ctx, c)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		// The response, whole, has been written: what comes next is the
		// answer to another request.
		if ac, ok := c.(*answerConn); ok && s == http.StateIdle {
			ac.handling.Store(false)
		}
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ac, ok := r.Context().Value(answerKey{}).(*answerConn); ok {
			ac.handling.Store(true)
		}
		h.ServeHTTP(w, r)
	})
	return answerListener{ln}
}

type answerKey struct{}

// answerListener hands out each connection as an [answerConn].
type answerListener struct{ net.Listener }

func (l answerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &answerConn{Conn: c}, nil
}

// answerConn is a connection whose responses written by net/http itself
// get [ownHeaders]; see [answerOwn].
type answerConn struct {
	net.Conn
	// handling is set while a handler's response is being written, from
	// the handler's start until the connection is idle again.
	handling atomic.Bool
}

func (c *answerConn) Write(p []byte) (int, error) {
	if c.handling.Load() || !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return c.Conn.Write(p)
	}
	i := bytes.Index(p, []byte("\r\n"))
	if i < 0 {
		return c.Conn.Write(p)
	}
	out := make([]byte, 0, len(p)+len(ownHeaders))
	out = append(append(append(out, p[:i+2]...), ownHeaders...), p[i+2:]...)
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection, as net/http does after a 431 so
// that the client reads it before the connection is reset.
func (c *answerConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
