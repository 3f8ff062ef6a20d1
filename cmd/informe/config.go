package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"
)

// A form is the flags of one command as they are read: every command's
// flags are declared through one, so that a value that does not parse is
// kept as a problem instead of stopping urfave/cli at the first, and so
// that each problem can name the environment variable the value came
// from. A command's Action validates the whole form (its check methods
// and [form.err]) before it opens anything: the database, a listener, a
// certificate or a file.
type form struct {
	command string
	names   []string            // the flags, in declaration order
	env     map[string]*envVar  // by flag name
	bad     map[string]error    // values that did not parse, by flag name
	wrong   map[string][]string // what Validate found, by flag name
	extra   []string            // problems of no one flag (arguments)
	flags   map[string]cli.Flag // by flag name
	// validate, if not nil, checks the command's own flags (into wrong).
	validate func(*cli.Command)
}

func newForm(command string) *form {
	return &form{command: command, env: map[string]*envVar{}, bad: map[string]error{}, wrong: map[string][]string{}, flags: map[string]cli.Flag{}}
}

// add registers fl, declared through f, and returns it.
func (f *form) add(name string, fl cli.Flag) cli.Flag {
	f.names = append(f.names, name)
	f.flags[name] = fl
	return fl
}

// sources is the flag's environment variable, key; "" has none.
func (f *form) sources(name, key string) cli.ValueSourceChain {
	if key == "" {
		return cli.ValueSourceChain{}
	}
	e := &envVar{key: key}
	f.env[name] = e
	return cli.NewValueSourceChain(e)
}

// text declares a string flag.
func (f *form) text(name, key, value string, dst *string, usage string) *cli.StringFlag {
	fl := &cli.StringFlag{Name: name, Value: value, Destination: dst, Usage: usage, Sources: f.sources(name, key)}
	f.add(name, fl)
	return fl
}

// list declares a repeatable string flag (its variable comma-separated).
func (f *form) list(name, key string, dst *[]string, usage string) *cli.StringSliceFlag {
	fl := &cli.StringSliceFlag{Name: name, Destination: dst, Usage: usage, Sources: f.sources(name, key)}
	f.add(name, fl)
	return fl
}

// typed declares a flag of an int, int64, time.Duration or bool, whose
// value is parsed as urfave/cli's own flags of those types parse it.
func typed[T int | int64 | time.Duration | bool](f *form, name, key string, value T, dst *T, usage string) *cli.FlagBase[T, parsing, lenient[T]] {
	fl := &cli.FlagBase[T, parsing, lenient[T]]{Name: name, Value: value, Destination: dst, Usage: usage,
		Sources: f.sources(name, key), Config: parsing{name: name, form: f}}
	f.add(name, fl)
	return fl
}

// flag names the flag name for a message: "--name", and its environment
// variable when the value came from it.
func (f *form) flag(name string) string {
	if e := f.env[name]; e != nil && e.used {
		return fmt.Sprintf("--%s (from %s)", name, e.key)
	}
	return "--" + name
}

// ok reports whether the flag's value parsed and passed the checks so far.
func (f *form) ok(name string) bool {
	return f.bad[name] == nil && len(f.wrong[name]) == 0
}

// fail records what is wrong with the flag name.
func (f *form) fail(name, format string, args ...any) {
	f.wrong[name] = append(f.wrong[name], fmt.Sprintf(format, args...))
}

// check records err, if any, as what is wrong with the flag name.
func (f *form) check(name string, err error) {
	if err != nil {
		f.fail(name, "%s", err.Error())
	}
}

// set reports whether the flag was given, on the command line or by its
// variable.
func (f *form) set(name string) bool {
	fl, ok := f.flags[name]
	return ok && fl.IsSet()
}

// err returns the problems found, one line each in the order of the flags,
// as a [usageError]; nil if there are none.
func (f *form) err() error {
	var lines []string
	for _, name := range f.names {
		if err := f.bad[name]; err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", f.flag(name), err))
		}
		for _, w := range f.wrong[name] {
			lines = append(lines, fmt.Sprintf("%s: %s", f.flag(name), w))
		}
	}
	lines = append(lines, f.extra...)
	if len(lines) == 0 {
		return nil
	}
	return &usageError{command: f.command, lines: lines}
}

// usageError is a command invoked wrongly: flags or environment values
// that are not valid, one line each, found before anything was opened.
// main exits 2 for it.
type usageError struct {
	command string // "serve", "token create"
	lines   []string
}

func (e *usageError) Error() string {
	var b strings.Builder
	for i, l := range e.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.command != "" {
			b.WriteString(e.command + ": ")
		}
		b.WriteString(l)
	}
	return b.String()
}

// onUsageError turns urfave/cli's own usage errors (a flag that does not
// exist, one without its value) into a [usageError].
func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	name := strings.TrimSpace(strings.TrimPrefix(cmd.FullName(), "informe"))
	help := strings.TrimSpace("informe " + name + " --help")
	return &usageError{command: name, lines: []string{fmt.Sprintf("%v (see %s)", err, help)}}
}

// envVar is a flag's environment variable that remembers whether the
// flag's value was taken from it: urfave/cli looks a variable up only
// when the command line did not give the flag.
type envVar struct {
	key  string
	used bool
}

func (e *envVar) Lookup() (string, bool) {
	v, ok := os.LookupEnv(e.key)
	e.used = ok && v != ""
	return v, ok
}

func (e *envVar) IsFromEnv() bool  { return true }
func (e *envVar) Key() string      { return e.key }
func (e *envVar) String() string   { return fmt.Sprintf("environment variable %q", e.key) }
func (e *envVar) GoString() string { return fmt.Sprintf("&envVar{key:%q}", e.key) }

// parsing is the configuration of a [lenient] flag: its form and name, where
// a value that does not parse is recorded.
type parsing struct {
	name string
	form *form
}

// lenient is the value of a flag declared with [typed]: it parses as
// urfave/cli's own int, duration and bool flags do, but a value that does
// not parse is recorded in the form, for Validate, rather than returned,
// which would stop the parsing of every later flag.
type lenient[T int | int64 | time.Duration | bool] struct {
	p *T
	c parsing
}

func (lenient[T]) Create(val T, p *T, c parsing) cli.Value {
	*p = val
	return &lenient[T]{p: p, c: c}
}

func (lenient[T]) ToString(val T) string { return fmt.Sprint(val) }

func (v *lenient[T]) Set(s string) error {
	var err error
	switch p := any(v.p).(type) {
	case *int:
		var n int64
		if n, err = strconv.ParseInt(s, 0, strconv.IntSize); err == nil {
			*p = int(n)
		} else {
			err = fmt.Errorf("%q is not an integer", s)
		}
	case *int64:
		var n int64
		if n, err = strconv.ParseInt(s, 0, 64); err == nil {
			*p = n
		} else {
			err = fmt.Errorf("%q is not an integer", s)
		}
	case *time.Duration:
		var d time.Duration
		if d, err = time.ParseDuration(s); err == nil {
			*p = d
		} else {
			err = fmt.Errorf("%q is not a duration such as 30s, 10m or 720h", s)
		}
	case *bool:
		var b bool
		if b, err = strconv.ParseBool(s); err == nil {
			*p = b
		} else {
			err = fmt.Errorf("%q is not true or false", s)
		}
	}
	if err != nil {
		v.c.form.bad[v.c.name] = err
	} else {
		delete(v.c.form.bad, v.c.name)
	}
	return nil
}

func (v *lenient[T]) Get() any       { return *v.p }
func (v *lenient[T]) String() string { return fmt.Sprint(*v.p) }

// IsBoolFlag lets a bool flag be given without a value (--gzip).
func (v *lenient[T]) IsBoolFlag() bool {
	_, ok := any(v.p).(*bool)
	return ok
}

// Checks of values common to several commands' flags.

// notNegative checks that the duration or number of the flag name is not
// below 0.
func notNegative[T int | int64 | time.Duration](f *form, name string, v T) {
	if f.ok(name) && v < 0 {
		f.fail(name, "must not be negative")
	}
}

// atLeast checks that the number of the flag name is min or more.
func atLeast(f *form, name string, v, min int) {
	if f.ok(name) && v < min {
		f.fail(name, "must be %d or more, got %d", min, v)
	}
}

// address checks that the flag name is a host:port address a listener can
// listen on ("" allowed when empty is). The host is not resolved.
func address(f *form, name, addr string, empty bool) {
	if addr == "" {
		if !empty {
			f.fail(name, "must be a host:port address such as :8080 or 127.0.0.1:8080")
		}
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		f.fail(name, "%q is not a host:port address such as :8080 or 127.0.0.1:8080", addr)
		return
	}
	if n, err := strconv.Atoi(port); err == nil {
		if n < 0 || n > 65535 {
			f.fail(name, "port %d is not from 0 to 65535", n)
		}
		return
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		f.fail(name, "%q has no port number", addr)
	}
}

// databaseURL checks --database-url without connecting, and returns its
// parsed configuration (nil when it is wrong). A URL holds a password: its
// messages never repeat any part of it.
func databaseURL(f *form, url string) *pgxpool.Config {
	const name = "database-url"
	if url == "" {
		f.fail(name, "is required: the PostgreSQL URL (postgres://user@host:5432/db) or DSN to read from")
		return nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message quotes the URL (its password masked, not its
		// user or host) and net/url's can quote part of the password.
		f.fail(name, "is neither a PostgreSQL URL (postgres://user@host:5432/db) nor a key=value DSN, or a setting in it is wrong")
		return nil
	}
	return cfg
}
