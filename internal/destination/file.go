package destination

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/informe/informe/internal/failure"
)

// File is a local file that appears at its path whole or not at all. It
// is written as a hidden temporary file in the target's folder (a rename
// is atomic only within one file system), and [File.Commit] syncs it,
// renames it over the target and syncs the folder, so that after a crash
// the target holds either its old content or all of the new. Until
// Commit, the target is untouched; [File.Abort] removes the temporary
// file. `informe export` and file:// destinations both write with it.
type File struct {
	*os.File // the temporary file
	path     string
	done     bool
}

// CreateFile starts writing the file at path, which must be the path of
// a regular file or of none in an existing folder. The file gets the mode
// of the file it replaces, or 0666 less the umask for a new one, as a
// file created in place would. It returns the error of creating the
// temporary file (an *fs.PathError).
func CreateFile(path string) (*File, error) {
	dir, base := filepath.Split(path)
	var perm fs.FileMode = 0o666
	old, statErr := os.Stat(path)
	if statErr == nil {
		perm = old.Mode().Perm()
	}
	for range 10 {
		// Hidden and ending in .tmp, so that globs over the folder, such
		// as a cron job's *.csv, do not pick it up half written.
		tmp := filepath.Join(dir, tempName(base))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if statErr == nil {
			// OpenFile's perm went through the umask; the old file's did not.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, err
			}
		}
		return &File{File: f, path: path}, nil
	}
	return nil, fmt.Errorf("cannot create a temporary file next to %s", path)
}

// tempName returns a name for the temporary file of the file called base:
// hidden, random, ending in .tmp.
func tempName(base string) string {
	var r [6]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	return "." + base + "." + hex.EncodeToString(r[:]) + ".tmp"
}

// Commit makes the written content the file at its path: it syncs the
// temporary file to disk, closes it, renames it over the target, and
// syncs the folder so that the rename is durable. If it fails before the
// rename, the temporary file is removed and the target is untouched.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomic file already committed or aborted")
	}
	if err := f.Sync(); err != nil {
		f.Abort()
		return err
	}
	if err := f.File.Close(); err != nil {
		f.Abort()
		return err
	}
	if err := os.Rename(f.Name(), f.path); err != nil {
		f.Abort()
		return err
	}
	f.done = true
	d, err := os.Open(filepath.Dir(f.path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s is written, but syncing its folder failed: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the target as it
// was. It does nothing after Commit or a first Abort, so it can be
// deferred; its error is that of removing the temporary file.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	f.File.Close()
	return os.Remove(f.Name())
}

// Close is Abort unless Commit came first.
func (f *File) Close() error { return f.Abort() }

// fileDest is a file:// destination: a local folder.
type fileDest struct {
	target
}

// parseFile returns the destination of a file:// URL: an absolute path,
// no host but localhost, no options.
func parseFile(u *url.URL, opts options) (Destination, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, invalid("url", "url_syntax", "a file:// destination is on this machine: write file:///folder/name, with no host")
	}
	if u.User != nil {
		return nil, invalid("url", "url_syntax", "a file:// destination has no user")
	}
	if err := opts.known("file"); err != nil {
		return nil, err
	}
	t, err := parseTarget(u)
	if err != nil {
		return nil, err
	}
	if t.dir == "" {
		t.dir = "/"
	}
	return &fileDest{target: t}, nil
}

// Open starts writing name in d's folder through a [File].
func (d *fileDest) Open(ctx context.Context, name string) (Writer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, interrupted(ctx, d.dir)
	}
	f, err := CreateFile(filepath.Join(d.dir, name))
	if err != nil {
		return nil, d.failed(err)
	}
	return &fileWriter{ctx: ctx, f: f, d: d}, nil
}

// Check writes an empty file in d's folder and removes it.
func (d *fileDest) Check(ctx context.Context) error {
	return openAndAbort(ctx, d, ".informe-check")
}

// failed classifies err, of writing in d's folder.
func (d *fileDest) failed(err error) error {
	if coded(err) {
		return err
	}
	r := fileReason(err)
	return fail(r, err, "cannot write in folder %s: %s", d.dir, reasonWords[r])
}

// fileWriter is a [Writer] of a [File] under a context.
type fileWriter struct {
	ctx context.Context
	f   *File
	d   *fileDest
}

func (w *fileWriter) Write(p []byte) (int, error) {
	if w.ctx.Err() != nil {
		w.f.Abort()
		return 0, interrupted(w.ctx, w.d.dir)
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.f.Abort()
		return n, w.d.failed(err)
	}
	return n, nil
}

func (w *fileWriter) Commit() error {
	if w.ctx.Err() != nil {
		w.f.Abort()
		return interrupted(w.ctx, w.d.dir)
	}
	if w.f.done {
		return failure.Errorf(failure.Internal, "the file was already committed or aborted")
	}
	if err := w.f.Commit(); err != nil {
		return w.d.failed(err)
	}
	return nil
}

func (w *fileWriter) Abort() error { return w.f.Abort() }
func (w *fileWriter) Close() error { return w.f.Abort() }
