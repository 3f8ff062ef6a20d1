package destination

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// A transfer is what a destination across the network (sftp, s3, https)
// does with one file's bytes; a [remote] drives it. Its errors are
// classified *failure.Error values.
type transfer interface {
	// write takes the file's next bytes.
	write(p []byte) (int, error)
	// commit makes the file visible, whole, under its name.
	commit() error
	// release lets go of what the transfer holds once committed (a
	// connection, a spool file).
	release() error
	// abort discards what was written, and releases the rest.
	abort() error
}

// remote is the [Writer] of a destination across the network: it runs
// its transfer until the first failure, or until its context is
// cancelled, and then aborts it, so that nothing is left behind; a call
// after Commit or Abort fails, and Close is Abort unless Commit came
// first.
type remote struct {
	ctx   context.Context
	where string // the destination, as messages name it
	t     transfer
	done  bool // committed or aborted
}

// errDone is the error of a Write or Commit after Commit or Abort.
func errDone() error {
	return fail(ReasonFailed, nil, "the delivery was already committed or aborted")
}

func (r *remote) Write(p []byte) (int, error) {
	if r.done {
		return 0, errDone()
	}
	if r.ctx.Err() != nil {
		r.Abort()
		return 0, interrupted(r.ctx, r.where)
	}
	n, err := r.t.write(p)
	if err != nil {
		r.Abort()
	}
	return n, err
}

func (r *remote) Commit() error {
	if r.done {
		return errDone()
	}
	err := r.ctx.Err()
	if err != nil {
		err = interrupted(r.ctx, r.where)
	} else {
		err = r.t.commit()
	}
	if err != nil {
		r.Abort()
		return err
	}
	r.done = true
	return r.t.release()
}

func (r *remote) Abort() error {
	if r.done {
		return nil
	}
	r.done = true
	return r.t.abort()
}

func (r *remote) Close() error { return r.Abort() }

// untrusted reports whether err is that of a server's certificate the
// connection does not trust.
func untrusted(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr *tls.CertificateVerificationError
	return errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &certErr)
}

// untrustedFailed is the error of a connection to host that did not trust
// its certificate.
func untrustedFailed(err error, host string) error {
	return fail(ReasonHostKey, err, "the certificate of %s is not trusted (name ca_file= for a private authority)", host)
}
