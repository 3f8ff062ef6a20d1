package postgres

import (
	"context"
	"strconv"
	"time"
)

// AuditOpening is an audit record as it is opened, in audit_records' terms:
// ClientAddress, UserAgent, Query, Rules, Format and Columns are NULL when
// empty.
type AuditOpening struct {
	Started                                 time.Time
	RequestID, Principal, ClientAddress     string
	UserAgent, Path, Datasets, Query, Rules string
	Format, Columns, Instance               string
}

// auditOpenSQL inserts a record, open. Its parameters are cast, so that
// they can be sent as text ([AuditOpening.args]). The record's commit is
// asynchronous (synchronous_commit off, for its transaction only): it is
// visible at once, and durable within PostgreSQL's WAL writer delay.
const auditOpenSQL = `WITH c AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO audit_records (started_at, request_id, principal, client_address, user_agent, path,
  dataset, query, rules, format, columns, instance)
SELECT $1::timestamptz, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text,
  $9::text, $10::text, $11::text, $12::text FROM c RETURNING id`

// args returns [auditOpenSQL]'s parameters for o, as text (nil for NULL).
func (o AuditOpening) args() [][]byte {
	text := func(s string) []byte {
		if s == "" {
			return nil
		}
		return []byte(s)
	}
	return [][]byte{
		[]byte(o.Started.Format("2006-01-02 15:04:05.999999Z07:00")),
		[]byte(o.RequestID), []byte(o.Principal), text(o.ClientAddress), text(o.UserAgent), []byte(o.Path),
		[]byte(o.Datasets), text(o.Query), text(o.Rules), text(o.Format),
		text(o.Columns), []byte(o.Instance),
	}
}

// AuditOpenPrelude returns the [Prelude] that inserts o in the round trip
// that begins a read's snapshot; done is called with the record's id, or
// with the insert's error ([ErrPreludeNotRun] if the snapshot never began).
func AuditOpenPrelude(o AuditOpening, done func(id int64, err error)) *Prelude {
	return &Prelude{SQL: auditOpenSQL, Args: o.args(), Done: func(id []byte, err error) {
		var n int64
		if err == nil {
			n, err = strconv.ParseInt(string(id), 10, 64)
		}
		done(n, err)
	}}
}

// OpenAuditRecord inserts o through q and returns the record's id.
func OpenAuditRecord(ctx context.Context, q Querier, o AuditOpening) (int64, error) {
	args := o.args()
	vals := make([]any, len(args))
	for i, a := range args {
		if a != nil {
			vals[i] = string(a)
		}
	}
	var id int64
	err := q.QueryRow(ctx, auditOpenSQL, vals...).Scan(&id)
	return id, err
}

// AuditCloses are the closes of audit records, one per element of each
// slice: a record's id, end, rows, bytes, status, outcome, reason (nil:
// NULL), the encoded set of persons its rows carried (nil: NULL), its
// datasets and its format (nil: NULL).
type AuditCloses struct {
	IDs      []int64
	Ended    []time.Time
	Rows     []int64
	Bytes    []int64
	Status   []int32
	Outcome  []string
	Reason   []*string
	Subjects [][]byte
	Datasets []string
	Formats  []*string
}

const auditCloseSQL = `WITH c AS (SELECT set_config('synchronous_commit', 'off', true))
UPDATE audit_records a SET ended_at = v.ended_at, rows = v.rows, bytes = v.bytes, status = v.status,
  outcome = v.outcome, reason = v.reason, subjects = v.subjects, dataset = v.dataset, format = v.format
FROM c, unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::int[], $6::text[], $7::text[], $8::bytea[],
  $9::text[], $10::text[]) AS v(id, ended_at, rows, bytes, status, outcome, reason, subjects, dataset, format)
WHERE a.id = v.id`

// CloseAuditRecords writes c in one statement, committed asynchronously
// as [AuditOpenPrelude]'s insert is.
func CloseAuditRecords(ctx context.Context, q Querier, c AuditCloses) error {
	_, err := q.Exec(ctx, auditCloseSQL, c.IDs, c.Ended, c.Rows, c.Bytes, c.Status, c.Outcome, c.Reason, c.Subjects, c.Datasets, c.Formats)
	return err
}

// AuditRefusals are counts of refused requests, one per element of each
// slice: the first and last refusal, the token's name (nil: none), the
// client's address, user agent, path, query, status, how many, and why.
type AuditRefusals struct {
	First, Last                            []time.Time
	Principal, Address, Agent, Path, Query []*string
	Status, N                              []int32
	Reason                                 []*string
}

const auditRefusalsSQL = `WITH c AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO audit_records (started_at, ended_at, request_id, principal, client_address, user_agent, path,
  query, status, outcome, reason, requests, instance)
SELECT u.first, u.last, 'refused', coalesce(u.principal, '(no token)'), u.address, u.user_agent, u.path, u.query,
  u.status, 'refused', u.reason, u.n, $11
FROM c, unnest($1::timestamptz[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::int[], $9::int[], $10::text[]) AS u(first, last, principal, address, user_agent, path, query, status, n, reason)`

// RecordAuditRefusals inserts a record of each count of r, by instance,
// in one statement.
func RecordAuditRefusals(ctx context.Context, q Querier, r AuditRefusals, instance string) error {
	_, err := q.Exec(ctx, auditRefusalsSQL, r.First, r.Last, r.Principal, r.Address, r.Agent, r.Path, r.Query, r.Status, r.N, r.Reason, instance)
	return err
}

// RecordAuditEvent inserts the record of an event at at (its start and
// end), through q: a pool, or the transaction of the change it records.
// query and rules are NULL when nil.
func RecordAuditEvent(ctx context.Context, q Execer, at time.Time, principal, path string, query, rules *string, instance string) error {
	_, err := q.Exec(ctx, `INSERT INTO audit_records (started_at, ended_at, request_id, principal, path, query, rules, outcome, instance)
VALUES ($1, $1, 'event', $2, $3, $4, $5, 'recorded', $6)`, at, principal, path, query, rules, instance)
	return err
}

// PruneAudit deletes the records that started before before, and records
// that it did, as principal of instance (audit_prune); it returns how
// many it deleted.
func PruneAudit(ctx context.Context, q Querier, before time.Time, principal, instance string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT audit_prune($1, $2, $3)`, before, principal, instance).Scan(&n)
	return n, err
}
