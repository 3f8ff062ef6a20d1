package auth

import "time"

// SetClock makes s read the time from now: the age of a remembered
// refusal, and a token's expiry.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// SetRefusalsHeld makes s remember n refusals at most, forgetting those it
// holds.
func (s *Store) SetRefusalsHeld(n int) { s.refused = newRing[refusal](n) }

// SetTurns gives the lookups of tokens not seen valid atOnce turns at once,
// one every every (none: no rate) with bursts of burst.
func (s *Store) SetTurns(atOnce int, every time.Duration, burst int) {
	s.unseen = newGate(atOnce, every, burst)
}
