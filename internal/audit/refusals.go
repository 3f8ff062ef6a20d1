package audit

import (
	"context"
	"log/slog"
	"time"
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

const refusalsSQL = `WITH c AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO audit_records (started_at, ended_at, request_id, principal, client_address, user_agent, path,
  query, status, outcome, reason, requests, instance)
SELECT u.first, u.last, 'refused', coalesce(u.principal, '(no token)'), u.address, u.user_agent, u.path, u.query,
  u.status, 'refused', u.reason, u.n, $11
FROM c, unnest($1::timestamptz[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::int[], $9::int[], $10::text[]) AS u(first, last, principal, address, user_agent, path, query, status, n, reason)`

// writeRefusals writes the refusals counted since the last write.
func (l *Log) writeRefusals(ctx context.Context) {
	l.mu.Lock()
	counted := l.refusals
	l.refusals = map[refusalKey]*refusal{}
	l.mu.Unlock()
	if len(counted) == 0 {
		return
	}
	var (
		first, last                            []time.Time
		principal, address, agent, path, query []*string
		reason                                 []*string
		status, n                              []int32
	)
	for k, f := range counted {
		first, last = append(first, f.first), append(last, f.last)
		principal = append(principal, nullable(k.principal))
		address = append(address, nullable(k.address))
		agent = append(agent, nullable(f.userAgent))
		path = append(path, &k.path)
		query = append(query, nullable(f.query))
		reason = append(reason, nullable(k.reason))
		status = append(status, int32(k.status))
		n = append(n, int32(f.n))
	}
	err := l.write(ctx, func(ctx context.Context) error {
		_, err := l.pool.Exec(ctx, refusalsSQL, first, last, principal, address, agent, path, query, status, n, reason, l.instance)
		return err
	})
	if err != nil {
		l.logger.LogAttrs(ctx, slog.LevelError, "refused requests could not be recorded",
			slog.Int("records", len(first)), slog.String("error", errText(err)))
	}
}
