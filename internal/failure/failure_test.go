package failure_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/informe/informe/internal/failure"
)

// cancelled returns a context cancelled with cause (context.Canceled when
// nil), as net/http (no cause) or informe (a cause of its own) cancel a
// request's.
func cancelled(cause error) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	return ctx
}

// TestClassify checks who Classify says ended the work: the code, the
// client's message, and the cause kept in the chain.
func TestClassify(t *testing.T) {
	live := context.Background()
	boom := errors.New("boom")
	const timedOut = "Service Unavailable: the request took longer than this server allows; ask for fewer rows, or try again"
	for _, tt := range []struct {
		name      string
		ctx       context.Context
		err       error
		wantCode  failure.Code
		wantMsg   string
		wantCause error
	}{
		{"Nil", live, nil, failure.Internal, "", nil},
		{"Internal", live, boom, failure.Internal, "Internal Server Error", boom},
		{"Coded", cancelled(failure.ErrShutdown), failure.Errorf(failure.Invalid, "bad"), failure.Invalid, "bad", nil},
		{"Shutdown", cancelled(failure.ErrShutdown), boom, failure.Unavailable, "Service Unavailable: the server is shutting down; try again", failure.ErrShutdown},
		{"RequestTimeoutCause", cancelled(failure.ErrRequestTimeout), boom, failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"DeadlineCause", cancelled(context.DeadlineExceeded), boom, failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"RequestTimeoutInErr", live, fmt.Errorf("rows: %w", failure.ErrRequestTimeout), failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"DeadlineInErr", live, fmt.Errorf("rows: %w", context.DeadlineExceeded), failure.Unavailable, timedOut, failure.ErrRequestTimeout},
		{"ClientGone", cancelled(nil), boom, failure.Internal, "Internal Server Error", failure.ErrClientGone},
		{"OtherCause", cancelled(boom), errors.New("rows"), failure.Internal, "Internal Server Error", boom},
		{"CanceledLive", live, context.Canceled, failure.Internal, "Internal Server Error", context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := failure.Classify(tt.ctx, tt.err)
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
