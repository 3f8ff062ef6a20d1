package destination

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Dest is an s3:// destination: a bucket of Amazon S3 or of a server
// that speaks its API (MinIO, SeaweedFS, Ceph, ...). A file is streamed
// as a multipart upload, one part of part_size in memory at a time, and
// completed only after its last byte: until then the bucket has no object
// of that name (nor a changed one), and a failure or a cancel aborts the
// upload so that its parts are dropped.
//
// The client is minio-go's Core: it exposes the multipart calls
// themselves (create, put a part, complete, abort), so that the upload is
// driven by Write as the file is produced and aborted on our terms, with
// a context of its own when the delivery's was cancelled; it reaches any
// S3-compatible endpoint without configuration, and brings a handful of
// small modules where the AWS SDK v2 brings a dozen (smithy, each
// service's module, its own signing and retry stacks) for one API.
type s3Dest struct {
	target
	bucket   string
	endpoint *url.URL
	region   string
	access   secretRef
	secret   secretRef
	caFile   string
	partSize int
}

// The size of a part: S3 takes parts of 5 MiB at least (but the last),
// 5 GiB at most.
const (
	defaultPartMiB = 16
	minPartMiB     = 5
	maxPartMiB     = 5 << 10
)

// parseS3 returns the destination of an s3:// URL: the bucket as its
// host, the object's key as its path, and the options endpoint (or
// region, for Amazon S3's own), region, access_key_env or _file,
// secret_key_env or _file, ca_file and part_size (MiB).
func parseS3(u *url.URL, opts options) (Destination, error) {
	if u.User != nil {
		return nil, invalid("url", "url_syntax", "an s3:// destination has no user: name the access key with access_key_env= or access_key_file=")
	}
	if u.Port() != "" || u.Hostname() == "" {
		return nil, invalid("url", "url_syntax", "an s3:// destination's host is its bucket: s3://bucket/prefix/name?endpoint=https://host:port")
	}
	if err := opts.known("s3", "endpoint", "region", "access_key_env", "access_key_file", "secret_key_env", "secret_key_file", "ca_file", "part_size"); err != nil {
		return nil, err
	}
	d := &s3Dest{bucket: u.Hostname(), region: opts["region"], partSize: defaultPartMiB << 20}
	ep := opts["endpoint"]
	if ep == "" {
		if d.region == "" {
			return nil, invalid("endpoint", "option_missing", "an s3:// destination needs endpoint= (such as https://minio.example.cl:9000), or region= for Amazon S3")
		}
		ep = "https://s3." + d.region + ".amazonaws.com"
	}
	e, err := url.Parse(ep)
	if err != nil || e.Host == "" || (e.Path != "" && e.Path != "/") || e.RawQuery != "" || e.User != nil {
		return nil, invalid("endpoint", "option_value", "endpoint must be https://host or https://host:port, with no path, user or query")
	}
	switch e.Scheme {
	case "https":
	case "http":
		if !loopback(e.Hostname()) {
			return nil, invalid("endpoint", "option_value", "an http:// endpoint sends files unencrypted: use https:// (http:// is taken on this machine's loopback only)")
		}
	default:
		return nil, invalid("endpoint", "option_value", "endpoint must start with https://")
	}
	d.endpoint = e
	if d.access, err = opts.secret("access_key", true); err != nil {
		return nil, err
	}
	if d.secret, err = opts.secret("secret_key", true); err != nil {
		return nil, err
	}
	if d.caFile, err = opts.absFile("ca_file", false); err != nil {
		return nil, err
	}
	if v := opts["part_size"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < minPartMiB || n > maxPartMiB {
			return nil, invalid("part_size", "option_value", "part_size is the size of an upload's part in MiB, from %d to %d", minPartMiB, maxPartMiB)
		}
		d.partSize = n << 20
	}
	if d.target, err = parseTarget(u); err != nil {
		return nil, err
	}
	d.dir = strings.TrimPrefix(d.dir, "/")
	return d, nil
}

// loopback reports whether host is this machine's loopback.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// where is what messages name: the bucket and its endpoint.
func (d *s3Dest) where() string { return "bucket " + d.bucket + " at " + d.endpoint.Host }

// key returns the object key of the file called name.
func (d *s3Dest) key(name string) string {
	if d.dir == "" {
		return name
	}
	return d.dir + "/" + name
}

// client reads the credentials and returns a client of d's endpoint,
// which does not retry: the scheduler does.
func (d *s3Dest) client() (*minio.Core, error) {
	ak, err := d.access.read(os.ReadFile)
	if err != nil {
		return nil, err
	}
	sk, err := d.secret.read(os.ReadFile)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if d.endpoint.Scheme == "https" {
		cfg, err := tlsConfig(d.caFile, d.endpoint.Hostname())
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	c, err := minio.NewCore(d.endpoint.Host, &minio.Options{
		Creds:      credentials.NewStaticV4(ak, sk, ""),
		Secure:     d.endpoint.Scheme == "https",
		Region:     d.region,
		Transport:  tr,
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fail(ReasonFailed, nil, "the endpoint of %s is not usable", d.where())
	}
	return c, nil
}

// failed classifies err, of a call to d's endpoint.
func (d *s3Dest) failed(ctx context.Context, err error) error {
	if coded(err) {
		return err
	}
	if ctx.Err() != nil {
		return interrupted(ctx, d.where())
	}
	r := minio.ToErrorResponse(err)
	switch r.Code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "InvalidSecurity":
		return fail(ReasonAuth, err, "%s refused the access key or secret key", d.where())
	case "AccessDenied", "AllAccessDisabled":
		return fail(ReasonPermission, err, "%s denies writing under %q", d.where(), d.dir)
	case "NoSuchBucket":
		return fail(ReasonNotFound, err, "there is no %s", d.where())
	case "EntityTooLarge", "QuotaExceeded", "XMinioStorageFull", "XMinioAdminBucketQuotaExceeded", "StorageFull":
		return fail(ReasonFull, err, "%s is full or over its quota", d.where())
	case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout":
		return fail(ReasonUnreachable, err, "%s is unavailable (%s)", d.where(), r.Code)
	}
	switch {
	case untrusted(err):
		return untrustedFailed(err, d.endpoint.Host)
	case r.Code == "" || r.StatusCode >= 500:
		return fail(ReasonUnreachable, err, "cannot reach %s", d.where())
	}
	return fail(ReasonRejected, err, "%s refused the upload (%s)", d.where(), r.Code)
}

// Open starts a multipart upload of name, so that wrong credentials, a
// missing bucket or a denied write are known before the first byte.
func (d *s3Dest) Open(ctx context.Context, name string) (Writer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, interrupted(ctx, d.where())
	}
	c, err := d.client()
	if err != nil {
		return nil, err
	}
	key := d.key(name)
	id, err := c.NewMultipartUpload(ctx, d.bucket, key, minio.PutObjectOptions{ContentType: contentType(name)})
	if err != nil {
		return nil, d.failed(ctx, err)
	}
	t := &s3Upload{ctx: ctx, d: d, c: c, key: key, id: id, buf: make([]byte, 0, d.partSize), ctype: contentType(name)}
	return &remote{ctx: ctx, where: d.where(), t: t}, nil
}

// Check starts a multipart upload of a temporary key and aborts it: the
// credentials, the bucket and the right to write, with no object made.
func (d *s3Dest) Check(ctx context.Context) error {
	return openAndAbort(ctx, d, tempName("informe-check"))
}

// s3Upload is one multipart upload.
type s3Upload struct {
	ctx   context.Context
	d     *s3Dest
	c     *minio.Core
	key   string
	id    string
	ctype string
	buf   []byte // the next part, up to partSize
	parts []minio.CompletePart
}

func (w *s3Upload) write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			if err := w.put(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// put uploads the buffered part.
func (w *s3Upload) put() error {
	num := len(w.parts) + 1
	// The part's SHA-256 is signed, so that the server refuses a part
	// that arrived changed; on http:// (loopback) minio-go would otherwise
	// sign aws-chunked encoding, which not every S3-compatible server reads.
	sum := sha256.Sum256(w.buf)
	part, err := w.c.PutObjectPart(w.ctx, w.d.bucket, w.key, w.id, num, bytes.NewReader(w.buf), int64(len(w.buf)), minio.PutObjectPartOptions{Sha256Hex: hex.EncodeToString(sum[:]), DisableContentSha256: true})
	if err != nil {
		return w.d.failed(w.ctx, err)
	}
	w.parts = append(w.parts, minio.CompletePart{PartNumber: num, ETag: part.ETag})
	w.buf = w.buf[:0]
	return nil
}

// commit uploads the last part and completes the upload; the object
// appears then, whole. An empty file is a plain, empty object.
func (w *s3Upload) commit() error {
	if len(w.parts) == 0 && len(w.buf) == 0 {
		empty := sha256.Sum256(nil)
		_, err := w.c.PutObject(w.ctx, w.d.bucket, w.key, bytes.NewReader(nil), 0, "", hex.EncodeToString(empty[:]), minio.PutObjectOptions{ContentType: w.ctype, DisableContentSha256: true})
		if err != nil {
			return w.d.failed(w.ctx, err)
		}
		return w.abortUpload()
	}
	if len(w.buf) > 0 {
		if err := w.put(); err != nil {
			return err
		}
	}
	if w.ctx.Err() != nil {
		return interrupted(w.ctx, w.d.where())
	}
	if _, err := w.c.CompleteMultipartUpload(w.ctx, w.d.bucket, w.key, w.id, w.parts, minio.PutObjectOptions{ContentType: w.ctype}); err != nil {
		return w.d.failed(w.ctx, err)
	}
	return nil
}

// abortTimeout bounds the abort of an upload whose delivery's context was
// cancelled.
const abortTimeout = 30 * time.Second

// abortUpload aborts the multipart upload, even when the delivery's
// context was cancelled.
func (w *s3Upload) abortUpload() error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), abortTimeout)
	defer cancel()
	if err := w.c.AbortMultipartUpload(ctx, w.d.bucket, w.key, w.id); err != nil {
		return w.d.failed(ctx, err)
	}
	return nil
}

// release does nothing: a completed upload holds nothing.
func (w *s3Upload) release() error { return nil }

// abort aborts the upload: its parts are dropped, no object appears.
func (w *s3Upload) abort() error {
	w.buf = nil
	return w.abortUpload()
}

// contentType is the media type of a file called name.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".csv":
		return "text/csv"
	case ".tsv":
		return "text/tab-separated-values"
	case ".json":
		return "application/json"
	case ".ndjson":
		return "application/x-ndjson"
	case ".xlsx":
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case ".parquet":
		return "application/vnd.apache.parquet"
	case ".arrow", ".arrows":
		return "application/vnd.apache.arrow.stream"
	case ".gz":
		return "application/gzip"
	}
	return "application/octet-stream"
}
