package failure_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/informe/informe/internal/failure"
)

// TestClassify checks who Classify says ended the work: the code, the
// client's message, and the cause kept in the chain. The work ran under a
// live context, or one cancelled with the cause given (context.Canceled
// is a cancel without a cause, as net/http's).
func TestClassify(t *testing.T) {
	boom := errors.New("boom")
	const timedOut = "Service Unavailable: the request took longer than this server allows; ask for fewer rows, or try again"
	for _, tt := range []struct {
		name      string
		cancel    error // nil: a live context
		err       error
		wantCode  failure.Code
		wantMsg   string
		wantCause error
	}{
		{"Nil", nil, nil, failure.Internal, "", nil},
		{"Internal", nil, boom, failure.Internal, "Internal Server Error", boom},
		{"Coded", failure.ErrShutdown, failure.Errorf(failure.Invalid, "bad"), failure.Invalid, "bad", nil},
		{"Shutdown", failure.ErrShutdown, boom, failure.Unavailable, "Service Unavailable: the server is shutting down; try again", failure.ErrShutdown},
		{"RequestTimeoutCause", failure.ErrRequestTimeout, boom, failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"DeadlineCause", context.DeadlineExceeded, boom, failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"RequestTimeoutInErr", nil, fmt.Errorf("rows: %w", failure.ErrRequestTimeout), failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"DeadlineInErr", nil, fmt.Errorf("rows: %w", context.DeadlineExceeded), failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"ClientGone", context.Canceled, boom, failure.Internal, "Internal Server Error", failure.ErrClientGone},
		{"OtherCause", boom, errors.New("rows"), failure.Internal, "Internal Server Error", boom},
		{"CanceledLive", nil, context.Canceled, failure.Internal, "Internal Server Error", context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.cancel != nil {
				c, cancel := context.WithCancelCause(ctx)
				cancel(tt.cancel)
				ctx = c
			}
			got := failure.Classify(ctx, tt.err)
			if tt.err == nil {
				if got != nil {
					t.Fatalf("Classify(nil) = %v, want nil", got)
				}
				return
			}
			if code := failure.CodeOf(got); code != tt.wantCode {
				t.Errorf("code = %d, want %d", code, tt.wantCode)
			}
			if msg := failure.MessageOf(got); msg != tt.wantMsg {
				t.Errorf("message = %q, want %q", msg, tt.wantMsg)
			}
			if tt.wantCause != nil && !errors.Is(got, tt.wantCause) {
				t.Errorf("%v does not hold %v", got, tt.wantCause)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("%v lost the error it classified, %v", got, tt.err)
			}
		})
	}
}
