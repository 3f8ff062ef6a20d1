package destination_test

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/informe/informe/internal/destination"
	"github.com/informe/informe/internal/s3test"
)

func TestS3Destination(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	t.Setenv("INFORME_TEST_S3_KEY", srv.AccessKey)
	t.Setenv("INFORME_TEST_S3_READER", srv.ReadOnlyKey)
	t.Setenv("INFORME_TEST_S3_WRONG", "INFORMEUNKNOWNKEY")
	secretFile := writeSecret(t, srv.SecretKey)
	good := "endpoint=" + srv.Endpoint + "&access_key_env=INFORME_TEST_S3_KEY&secret_key_file=" + secretFile + "&part_size=5"
	parse := func(t *testing.T, bucket, query string) destination.Destination {
		t.Helper()
		d, err := destination.Parse("s3://" + bucket + "/daily/report-{date}.parquet?" + query)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The test's own client, to look into the bucket.
	u := srv.Endpoint[len("http://"):]
	look, err := minio.NewCore(u, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	objects := func(t *testing.T) []string {
		t.Helper()
		res, err := look.ListObjectsV2(srv.Bucket, "", "", "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range res.Contents {
			out = append(out, o.Key)
		}
		return out
	}
	uploads := func(t *testing.T) []minio.ObjectMultipartInfo {
		t.Helper()
		res, err := look.ListMultipartUploads(ctx, srv.Bucket, "", "", "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		return res.Uploads
	}
	remove := func(t *testing.T, key string) {
		t.Helper()
		if err := look.RemoveObject(ctx, srv.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const mib = 1 << 20
	body := content(12*mib + 3)

	t.Run("OK", func(t *testing.T) {
		d := parse(t, srv.Bucket, good)
		if err := d.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if got := uploads(t); len(got) != 0 {
			t.Errorf("Check left uploads: %v", got)
		}
		w, err := d.Open(ctx, "r.parquet")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for i := 0; i < 11*mib; i += mib {
			if _, err := w.Write(body[i : i+mib]); err != nil {
				t.Fatal(err)
			}
			if got := objects(t); len(got) != 0 {
				t.Fatalf("objects %v before Commit", got)
			}
		}
		up := uploads(t)
		if len(up) != 1 {
			t.Fatalf("uploads = %v, want one", up)
		}
		parts, err := look.ListObjectParts(ctx, srv.Bucket, up[0].Key, up[0].UploadID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(parts.ObjectParts), 2; got != want {
			t.Errorf("%d parts uploaded after 11 MiB in parts of 5, want %d", got, want)
		}
		for _, p := range parts.ObjectParts {
			if p.Size != 5*mib {
				t.Errorf("part %d has %d bytes, want 5 MiB", p.PartNumber, p.Size)
			}
		}
		if _, err := w.Write(body[11*mib:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		r, _, _, err := look.GetObject(ctx, srv.Bucket, "daily/r.parquet", minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(body) {
			t.Errorf("the object holds %d bytes, not the %d written", len(got), len(body))
		}
		if got := uploads(t); len(got) != 0 {
			t.Errorf("uploads left: %v", got)
		}
		remove(t, "daily/r.parquet")
	})

	t.Run("Empty", func(t *testing.T) {
		w, err := parse(t, srv.Bucket, good).Open(ctx, "empty.parquet")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := objects(t); len(got) != 1 || got[0] != "daily/empty.parquet" {
			t.Errorf("objects = %v, want daily/empty.parquet", got)
		}
		if got := uploads(t); len(got) != 0 {
			t.Errorf("uploads left: %v", got)
		}
		remove(t, "daily/empty.parquet")
	})

	for _, tt := range []struct {
		name string
		stop func(cancel func(), w destination.Writer) error
	}{
		{"Cancel", func(cancel func(), w destination.Writer) error {
			cancel()
			_, err := w.Write([]byte("more"))
			return err
		}},
		{"Abort", func(cancel func(), w destination.Writer) error { return w.Abort() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			w, err := parse(t, srv.Bucket, good).Open(cctx, "r.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(body[:6*mib]); err != nil { // a part uploaded
				t.Fatal(err)
			}
			if got := uploads(t); len(got) != 1 {
				t.Fatalf("uploads = %v, want one", got)
			}
			err = tt.stop(cancel, w)
			if tt.name == "Cancel" {
				wantReason(t, err, destination.ReasonInterrupted)
			} else if err != nil {
				t.Fatal(err)
			}
			if got := objects(t); len(got) != 0 {
				t.Errorf("objects = %v, want none", got)
			}
			if got := uploads(t); len(got) != 0 {
				t.Errorf("uploads left: %v", got)
			}
		})
	}

	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}()
	for _, tt := range []struct {
		name, bucket, query, reason string
		quota                       int64
	}{
		{"ErrWrongAccessKey", srv.Bucket, "endpoint=" + srv.Endpoint + "&access_key_env=INFORME_TEST_S3_WRONG&secret_key_file=" + secretFile, destination.ReasonAuth, -1},
		{"ErrReadOnly", srv.Bucket, "endpoint=" + srv.Endpoint + "&access_key_env=INFORME_TEST_S3_READER&secret_key_file=" + secretFile, destination.ReasonPermission, -1},
		{"ErrSecretUnset", srv.Bucket, "endpoint=" + srv.Endpoint + "&access_key_env=INFORME_TEST_S3_KEY&secret_key_env=INFORME_TEST_S3_UNSET", destination.ReasonSecret, -1},
		{"ErrNoBucket", "missing", good, destination.ReasonNotFound, -1},
		{"ErrFull", srv.Bucket, good, destination.ReasonFull, 6 * mib},
		{"ErrUnreachable", srv.Bucket, "endpoint=http://" + closed + "&access_key_env=INFORME_TEST_S3_KEY&secret_key_file=" + secretFile, destination.ReasonUnreachable, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv.SetQuota(tt.quota)
			defer srv.SetQuota(-1)
			d := parse(t, tt.bucket, tt.query)
			if tt.reason != destination.ReasonFull {
				wantReason(t, d.Check(ctx), tt.reason, srv.SecretKey)
			}
			w, err := d.Open(ctx, "r.parquet")
			if err == nil {
				defer w.Close()
				if _, err = w.Write(body); err == nil {
					err = w.Commit()
				}
			}
			wantReason(t, err, tt.reason, srv.SecretKey)
			if got := objects(t); len(got) != 0 {
				t.Errorf("objects = %v, want none", got)
			}
			if got := uploads(t); len(got) != 0 {
				t.Errorf("uploads left: %v", got)
			}
		})
	}
}
