// Package browser starts a headless Chromium for the web page's tests and
// checks (the browser tests and scripts/check-web), with the flags it needs
// to run as root in a container, a fresh profile, a language, and downloads
// into a folder ([Start]); or once, for tabs that are each a browser
// context of their own, as fresh as a new browser ([Launch], [Browser.Tab]).
// informe itself never imports it.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// ErrNotFound is returned by [Start] when no Chromium is installed.
var ErrNotFound = errors.New("browser: chromium not found (scripts/ensure-chromium installs it)")

// Path returns the Chromium binary: $CHROMIUM, else Debian's
// chromium-headless-shell, else Debian's chromium, else chromium or
// google-chrome on the PATH. The headless shell is Chromium's engine
// without the browser around it: the same page, rendered and scripted
// alike, started in half the time and run on about half the CPU.
func Path() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// Options are how to start the browser.
type Options struct {
	ProfileDir  string // a fresh, empty folder for the profile (required by Start)
	DownloadDir string // where downloads go, named by their GUID; "" refuses them
	Lang        string // Accept-Language, e.g. "es-CL"; "" leaves the browser's
	Width       int    // window size, default 1280x900
	Height      int
	// Flags are more command-line flags, such as host-resolver-rules (to
	// reach a test server under a public name) or
	// ignore-certificate-errors (for its self-signed certificate).
	Flags map[string]any
}

// Start starts Chromium and returns a chromedp context on its first tab;
// cancel stops the browser.
func Start(ctx context.Context, o Options) (context.Context, context.CancelFunc, error) {
	bctx, cancel, err := launch(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if err := allowDownloads(bctx, o.DownloadDir); err != nil {
		cancel()
		return nil, nil, err
	}
	return bctx, cancel, nil
}

// Browser is a running Chromium ([Launch]) that opens tabs ([Browser.Tab]),
// each in a browser context of its own: its own cookies, storage and
// downloads, as a browser started afresh would have, without the cost of
// starting one.
type Browser struct {
	ctx    context.Context // the first tab's, which holds the browser
	cancel context.CancelFunc
}

// Launch starts Chromium as o says, in a profile of its own that Close
// removes (o.ProfileDir is not used); o.DownloadDir is left to each tab.
func Launch(ctx context.Context, o Options) (*Browser, error) {
	profile, err := os.MkdirTemp("", "informe-browser-")
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	o.ProfileDir, o.DownloadDir = profile, ""
	bctx, stop, err := launch(ctx, o)
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	cancel := func() { stop(); os.RemoveAll(profile) }
	// The browser starts with its first tab.
	if err := chromedp.Do(bctx); err != nil {
		cancel()
		return nil, err
	}
	return &Browser{ctx: bctx, cancel: cancel}, nil
}

// Tab opens a tab in a new browser context, saving downloads in
// downloadDir ("" refuses them); cancel closes the tab and its context.
func (b *Browser) Tab(downloadDir string) (context.Context, context.CancelFunc, error) {
	tctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	if err := allowDownloads(tctx, downloadDir); err != nil {
		cancel()
		return nil, nil, err
	}
	return tctx, cancel, nil
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() { b.cancel() }

// launch starts Chromium with o's flags, returning the context of its
// first tab.
func launch(ctx context.Context, o Options) (context.Context, context.CancelFunc, error) {
	path, err := Path()
	if err != nil {
		return nil, nil, err
	}
	if o.Width == 0 {
		o.Width, o.Height = 1280, 900
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(o.ProfileDir),
		chromedp.Headless,
		chromedp.NoSandbox, // Chromium refuses to run as root with its sandbox
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	if o.Lang != "" {
		opts = append(opts, chromedp.Flag("lang", o.Lang), chromedp.Flag("accept-lang", o.Lang))
	}
	for k, v := range o.Flags {
		opts = append(opts, chromedp.Flag(k, v))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	return bctx, func() { cancelBrowser(); cancelAlloc() }, nil
}

// allowDownloads has the browser context of the tab of ctx save downloads
// in dir under their GUIDs, telling the tab of each ([Download] waits for
// them); "" refuses them.
func allowDownloads(ctx context.Context, dir string) error {
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		behavior := browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}
		if dir != "" {
			events := true
			behavior = browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events,
			}
		}
		behavior.BrowserContextID = chromedp.FromContext(ctx).BrowserContextID
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, behavior)
		return err
	}))
}

// Download runs start, which makes the page in ctx (a context of [Start]
// or of [Browser.Tab]) begin a download, and waits until it completes: it
// returns the file's suggested name and its bytes, read from dir, the
// folder the browser saves it in under its GUID.
func Download(ctx context.Context, dir string, start func() error) (name string, body []byte, err error) {
	begin := chromedp.Events(ctx, browser.DownloadWillBegin)
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	if err := start(); err != nil {
		return "", nil, err
	}
	for ev, err := range begin {
		if err != nil {
			return "", nil, fmt.Errorf("download: %w", err)
		}
		name = ev.SuggestedFilename
		break
	}
	for ev, err := range progress {
		if err != nil {
			return name, nil, fmt.Errorf("download: %w", err)
		}
		switch ev.State {
		case browser.DownloadProgressStateCompleted:
			body, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			return name, body, err
		case browser.DownloadProgressStateCanceled:
			return name, nil, errors.New("download: canceled")
		}
	}
	return name, nil, errors.New("download: none began")
}
