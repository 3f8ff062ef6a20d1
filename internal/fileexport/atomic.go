package fileexport

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// atomicFile is a file that appears at its path whole or not at all. It is
// written as a hidden temporary file in the target's folder (a rename is
// atomic only within one file system), and [atomicFile.Commit] syncs it,
// renames it over the target and syncs the folder, so that after a crash
// the target holds either its old content or all of the new. Until Commit,
// the target is untouched; [atomicFile.Abort] removes the temporary file.
type atomicFile struct {
	*os.File // the temporary file
	path     string
	done     bool
}

// createAtomic starts writing the file at path, which must be the path of
// a regular file or of none in an existing folder. The file gets the mode
// of the file it replaces, or 0666 less the umask for a new one, as a
// file created in place would. It returns the error of creating the
// temporary file.
func createAtomic(path string) (*atomicFile, error) {
	dir, base := filepath.Split(path)
	var perm fs.FileMode = 0o666
	old, statErr := os.Stat(path)
	if statErr == nil {
		perm = old.Mode().Perm()
	}
	for range 10 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		// Hidden and ending in .tmp, so that globs over the folder, such
		// as a cron job's *.csv, do not pick it up half written.
		tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(r[:])+".tmp")
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
		return &atomicFile{File: f, path: path}, nil
	}
	return nil, fmt.Errorf("cannot create a temporary file next to %s", path)
}

// Commit makes the written content the file at its path: it syncs the
// temporary file to disk, closes it, renames it over the target, and
// syncs the folder so that the rename is durable. If it fails before the
// rename, the temporary file is removed and the target is untouched.
func (f *atomicFile) Commit() error {
	if f.done {
		return errors.New("atomic file already committed or aborted")
	}
	if err := f.Sync(); err != nil {
		f.Abort()
		return err
	}
	if err := f.Close(); err != nil {
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
// deferred.
func (f *atomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}
