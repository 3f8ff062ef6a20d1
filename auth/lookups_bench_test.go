package auth_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

// BenchmarkAuthenticateUnderFlood authenticates a known token while 32
// clients send made-up tokens, each waiting at most 5 s (the default
// --acquire-timeout), with the turns of tokens not seen valid and without
// them (every lookup at once, as before they existed).
func BenchmarkAuthenticateUnderFlood(b *testing.B) {
	for _, bb := range []struct {
		name  string
		turns bool
	}{{"Turns", true}, {"NoTurns", false}} {
		b.Run(bb.name, func(b *testing.B) {
			ctx := context.Background()
			tokens, _, _ := newStore(b)
			if !bb.turns {
				tokens.SetTurns(1<<20, 0, 1)
			}
			secret, err := tokens.Create(ctx, "legit", nil, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tokens.Authenticate(ctx, secret); err != nil {
				b.Fatal(err)
			}
			flood, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for c := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; flood.Err() == nil; i++ {
						actx, cancel := context.WithTimeout(flood, 5*time.Second)
						_, _ = tokens.Authenticate(actx, madeUp(c<<32|i))
						cancel()
					}
				}()
			}
			b.ResetTimer()
			for range b.N {
				if _, err := tokens.Authenticate(ctx, secret); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			stop()
			wg.Wait()
			b.ReportMetric(float64(tokens.Stats().UnseenLookups)/float64(b.N), "flood-lookups/op")
		})
	}
}
