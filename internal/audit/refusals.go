package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/informe/informe/internal/postgres"
)

// refusalInterval is how often counted refusals are written: each written
// record counts the refusals of one path, principal, address, status and
// reason over at most this long.
const refusalInterval = 10 * time.Second

// maxRefusalKeys bounds the refusals counted between two writes; past it,
// new addresses are counted together under the address "(others)", so
// that a flood from many addresses costs informe no more memory.
const maxRefusalKeys = 10000

type refusalKey struct {
	principal, address, path, reason string
	status                           int
}

type refusal struct {
	first, last time.Time
	n           int
	userAgent   string
	query       string
}

// Refuse counts r, a request refused before any read (a 400, 401, 403,
// ...): refusals of the same path, principal, address, status and reason
// are written as one record, its requests their number, every
// [refusalInterval]. The record keeps the first refusal's query and user
// agent.
func (l *Log) Refuse(r *Record) {
	if l.Mode() == Off || r == nil {
		return
	}
	k := refusalKey{principal: r.Principal, address: r.ClientAddress, path: r.Path, reason: r.Reason, status: r.Status}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.refusals[k]
	if !ok && len(l.refusals) >= maxRefusalKeys {
		k.address = "(others)"
		f, ok = l.refusals[k]
	}
	if !ok {
		f = &refusal{first: now, userAgent: r.UserAgent, query: r.Query}
		l.refusals[k] = f
	}
	f.last = now
	f.n++
}

// writeRefusals writes the refusals counted since the last write.
func (l *Log) writeRefusals(ctx context.Context) {
	l.mu.Lock()
	counted := l.refusals
	l.refusals = map[refusalKey]*refusal{}
	l.mu.Unlock()
	if len(counted) == 0 {
		return
	}
	var rs postgres.AuditRefusals
	for k, f := range counted {
		rs.First, rs.Last = append(rs.First, f.first), append(rs.Last, f.last)
		rs.Principal = append(rs.Principal, nullable(k.principal))
		rs.Address = append(rs.Address, nullable(k.address))
		rs.Agent = append(rs.Agent, nullable(f.userAgent))
		rs.Path = append(rs.Path, &k.path)
		rs.Query = append(rs.Query, nullable(f.query))
		rs.Reason = append(rs.Reason, nullable(k.reason))
		rs.Status = append(rs.Status, int32(k.status))
		rs.N = append(rs.N, int32(f.n))
	}
	err := l.write(ctx, func(ctx context.Context) error {
		return postgres.RecordAuditRefusals(ctx, l.pool, rs, l.instance)
	})
	if err != nil {
		l.logger.LogAttrs(ctx, slog.LevelError, "refused requests could not be recorded",
			slog.Int("records", len(rs.First)), slog.String("error", errText(err)))
	}
}
