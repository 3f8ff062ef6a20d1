// Package destination owns where a scheduled delivery's file goes: a local
// folder (file://), an SFTP server (sftp://), an S3-compatible bucket
// (s3://) or an HTTPS receiver (https://), each named by one URL that
// [Parse] checks before anything connects. Every destination writes so
// that no reader ever sees half a file: a [Writer]'s bytes become visible
// at [Writer.Commit], whole, or never. It knows no HTTP framework and no
// database; its errors are [failure.Error] values whose reasons say what
// went wrong (see [Retryable]) and never hold a credential.
package destination

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // the default zone must load on an image without tzdata

	"github.com/informe/informe/internal/failure"
)

// Destination is where the files of one schedule go.
type Destination interface {
	// Name returns the file's name for a run at date: the URL's last path
	// element with each {date} written as 2006-01-02 in loc, or in
	// [DefaultZone] when loc is nil.
	Name(date time.Time, loc *time.Location) string
	// Open starts writing the file called name (as [Destination.Name]
	// returns it: one path element, no folder) in the destination's
	// folder, bucket prefix or URL. Nothing is visible until the Writer's
	// Commit. Cancelling ctx makes the next Write or Commit fail, and the
	// file is then never visible. Its errors are *failure.Error.
	Open(ctx context.Context, name string) (Writer, error)
	// Check tries the destination once, as a delivery would, without
	// leaving a file behind (see each scheme in docs/schedules.md). Its
	// errors are those of Open and Commit.
	Check(ctx context.Context) error
	// String returns the destination's URL with no secret in it.
	String() string
}

// Writer writes one file to a destination.
type Writer interface {
	// Write writes the file's next bytes; they are not visible yet.
	Write(p []byte) (int, error)
	// Commit makes the file visible, whole, under its name, replacing any
	// file of that name; it returns only once the destination has it. On
	// an error nothing new is visible (and Abort has been done).
	Commit() error
	// Abort discards what was written, leaving nothing behind that a
	// reader of the destination would take for the file. It does nothing
	// after Commit or a first Abort.
	Abort() error
	// Close releases the writer: after Commit, nothing more; without it,
	// Close is Abort, so that a deferred Close never publishes a file.
	Close() error
}

// openAndAbort opens a file called name in d and aborts it, as
// [Destination.Check] does where opening a file tries all that a delivery
// needs.
func openAndAbort(ctx context.Context, d Destination, name string) error {
	w, err := d.Open(ctx, name)
	if err != nil {
		return err
	}
	return w.Abort()
}

// DefaultZone is the zone of a schedule that names none: America/Santiago.
var DefaultZone = mustZone("America/Santiago")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err) // time/tzdata is linked in: it cannot fail
	}
	return loc
}

// dateLayout is how {date} is written.
const dateLayout = "2006-01-02"

// placeholder is the one placeholder of a name.
const placeholder = "{date}"

// Parse checks rawURL, a destination's URL, and returns its destination.
// It checks all that can be checked without connecting or reading a
// secret: the scheme (file, sftp, s3 or https), that each option is known
// to the scheme, given once and not empty, that the required ones are
// there, the name's placeholders, and that no credential is written in the
// URL itself (a password in it is refused: use password_env= or
// password_file=). Its errors are Invalid *failure.Error values whose
// Target is the part at fault ("url", "scheme", "name" or an option's
// name) and whose message never repeats rawURL.
func Parse(rawURL string) (Destination, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's error repeats the URL, which may hold a password.
		return nil, invalid("url", "url_syntax", "the destination is not a valid URL")
	}
	if _, ok := u.User.Password(); ok {
		return nil, invalid("url", "password_in_url", "the destination's URL holds a password, which would be stored and shown with it: leave it out and name an environment variable with password_env= or a file with password_file=")
	}
	if u.Opaque != "" || u.Fragment != "" || u.RawFragment != "" {
		return nil, invalid("url", "url_syntax", "the destination's URL must be scheme://host/folder/name, with no fragment")
	}
	opts, err := parseOptions(u.RawQuery)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file":
		return parseFile(u, opts)
	case "sftp":
		return parseSFTP(u, opts)
	case "s3":
		return parseS3(u, opts)
	case "https":
		return parseHTTPS(u, opts)
	case "http":
		return nil, invalid("scheme", "scheme", "http:// sends the file unencrypted: use https://")
	case "":
		return nil, invalid("scheme", "scheme", "the destination has no scheme: write file://, sftp://, s3:// or https://")
	}
	return nil, invalid("scheme", "scheme", "unknown destination scheme %q: write file://, sftp://, s3:// or https://", u.Scheme)
}

// options are a URL's query options, each given once.
type options map[string]string

// parseOptions reads raw, a URL's query, refusing an option given twice
// or with no value.
func parseOptions(raw string) (options, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, invalid("url", "url_syntax", "the destination's options are not a valid query string")
	}
	opts := options{}
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, invalid(k, "option_repeated", "option %s is given more than once", k)
		}
		if vs[0] == "" {
			return nil, invalid(k, "option_value", "option %s has no value", k)
		}
		opts[k] = vs[0]
	}
	return opts, nil
}

// known refuses an option of o that is not among names.
func (o options) known(scheme string, names ...string) error {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(names, k) {
			if len(names) == 0 {
				return invalid(k, "option_unknown", "unknown option %s: %s:// destinations take no options", safeName(k), scheme)
			}
			return invalid(k, "option_unknown", "unknown option %s: %s:// destinations take %s", safeName(k), scheme, strings.Join(names, ", "))
		}
	}
	return nil
}

// safeName quotes an option's name the client wrote, unless it is long
// enough to be a secret written where a name was expected.
func safeName(s string) string {
	if len(s) > 32 {
		return "(a long name)"
	}
	return fmt.Sprintf("%q", s)
}

// secret returns the secret named by o's option prefix+"_env" or
// prefix+"_file" (one at most); required says one must be given.
func (o options) secret(prefix string, required bool) (secretRef, error) {
	env, file := o[prefix+"_env"], o[prefix+"_file"]
	switch {
	case env != "" && file != "":
		return secretRef{}, invalid(prefix+"_env", "option_conflict", "give %s_env or %s_file, not both", prefix, prefix)
	case env == "" && file == "" && required:
		return secretRef{}, invalid(prefix+"_env", "option_missing", "name the %s with %s_env= (an environment variable) or %s_file= (a file)", strings.ReplaceAll(prefix, "_", " "), prefix, prefix)
	case file != "" && !path.IsAbs(file):
		return secretRef{}, invalid(prefix+"_file", "option_value", "%s_file must be an absolute path", prefix)
	}
	return secretRef{what: strings.ReplaceAll(prefix, "_", " "), env: env, file: file}, nil
}

// absFile returns o's option name, which must be an absolute path if given.
func (o options) absFile(name string, required bool) (string, error) {
	v := o[name]
	if v == "" {
		if required {
			return "", invalid(name, "option_missing", "option %s (a file's absolute path) is required", name)
		}
		return "", nil
	}
	if !path.IsAbs(v) {
		return "", invalid(name, "option_value", "option %s must be an absolute path", name)
	}
	return v, nil
}

// target is what every destination has: its URL, the folder (or bucket
// prefix, or URL path) and the name's template.
type target struct {
	u    url.URL // as parsed, for String
	dir  string  // the folder, with no trailing slash ("" for the root of a bucket)
	tmpl string  // the last path element, with its placeholders
}

// parseTarget splits u's path into a folder and a name template, which
// must be a file's name: not empty, no "." or "..", no placeholder but
// {date}.
func parseTarget(u *url.URL) (target, error) {
	p := u.Path
	if strings.Contains(p, "\x00") {
		return target{}, invalid("name", "name", "the destination's path holds a NUL byte")
	}
	dir, tmpl := path.Split(p)
	if tmpl == "" {
		return target{}, invalid("name", "name", "the destination's path must end with the file's name, such as /folder/report-{date}.csv")
	}
	for _, el := range strings.Split(strings.Trim(p, "/"), "/") {
		if el == "." || el == ".." || el == "" {
			return target{}, invalid("name", "name", "the destination's path may not hold empty, . or .. elements")
		}
	}
	if strings.Contains(dir, "{") || strings.Contains(dir, "}") {
		return target{}, invalid("name", "placeholder", "placeholders go in the file's name only, not in its folder")
	}
	rest := strings.ReplaceAll(tmpl, placeholder, "")
	if strings.ContainsAny(rest, "{}") {
		return target{}, invalid("name", "placeholder", "the name's only placeholder is {date}")
	}
	for _, r := range tmpl {
		if r < 0x20 || r == 0x7f {
			return target{}, invalid("name", "name", "the file's name holds a control character")
		}
	}
	return target{u: *u, dir: strings.TrimSuffix(dir, "/"), tmpl: tmpl}, nil
}

// Name writes t's template for a run at date in loc (DefaultZone if nil).
func (t target) Name(date time.Time, loc *time.Location) string {
	if loc == nil {
		loc = DefaultZone
	}
	return strings.ReplaceAll(t.tmpl, placeholder, date.In(loc).Format(dateLayout))
}

// String returns t's URL as written (but for escapes): Parse refuses a
// URL with a password, and the options only name where secrets are.
func (t target) String() string {
	s := t.u.Scheme + "://"
	if t.u.User != nil {
		s += t.u.User.Username() + "@"
	}
	s += t.u.Host + t.u.Path
	if t.u.RawQuery != "" {
		s += "?" + t.u.RawQuery
	}
	return s
}

// checkName refuses name unless it is a single path element a file can
// have.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return invalid("name", "name", "a file's name must be one path element, not empty, . or ..")
	}
	return nil
}

// secretRef is where a secret is: an environment variable or a file.
type secretRef struct {
	what string // what the secret is, for messages: "password"
	env  string
	file string
}

// given reports whether s names a place.
func (s secretRef) given() bool { return s.env != "" || s.file != "" }

// read returns the secret, read now (so that a rotated file is seen), with
// a file's trailing line break trimmed. Its error names where the secret
// was looked for, never its value.
func (s secretRef) read(readFile func(string) ([]byte, error)) (string, error) {
	if s.env != "" {
		v, ok := lookupEnv(s.env)
		if !ok || v == "" {
			return "", failure.Invalidf(s.what, "secret_missing", "the %s's environment variable %s is not set", s.what, s.env)
		}
		return v, nil
	}
	b, err := readFile(s.file)
	if err != nil {
		e := failure.Invalidf(s.what, "secret_missing", "the %s's file %s cannot be read", s.what, s.file)
		e.Err = err
		return "", e
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", failure.Invalidf(s.what, "secret_missing", "the %s's file %s is empty", s.what, s.file)
	}
	return v, nil
}

var _ io.WriteCloser = Writer(nil)
