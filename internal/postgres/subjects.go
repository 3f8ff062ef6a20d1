package postgres

import (
	"context"
	"time"
)

// BlockSubject blocks the person whose RUT's key is key, for reason, by
// actor; blocking a blocked key again replaces its reason, actor and time.
func BlockSubject(ctx context.Context, q Querier, key, reason, actor string) error {
	_, err := q.Exec(ctx, `INSERT INTO subject_blocks (rut_key, reason, blocked_by) VALUES ($1, $2, $3)
			ON CONFLICT (rut_key) DO UPDATE SET reason = excluded.reason, blocked_by = excluded.blocked_by, blocked_at = now()`,
		key, reason, actor)
	return err
}

// UnblockSubject removes the block of key, and returns how many it
// removed (0 or 1).
func UnblockSubject(ctx context.Context, q Querier, key string) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM subject_blocks WHERE rut_key = $1`, key)
	return tag.RowsAffected(), err
}

// RecordSubjectEvent records that actor did action ("block", "unblock")
// to key, for reason (NULL when empty).
func RecordSubjectEvent(ctx context.Context, q Querier, key, action, reason, actor string) error {
	_, err := q.Exec(ctx, `INSERT INTO subject_block_events (rut_key, action, reason, actor) VALUES ($1, $2, NULLIF($3, ''), $4)`,
		key, action, reason, actor)
	return err
}

// SubjectBlock is a row of subject_blocks.
type SubjectBlock struct {
	Key    string // the RUT's key: its body and check digit
	Reason string
	By     string
	At     time.Time
}

// SubjectBlocks returns the blocks in force, in the order of their keys'
// RUTs; with an error, those read before it.
func SubjectBlocks(ctx context.Context, q Querier) ([]SubjectBlock, error) {
	rows, err := q.Query(ctx, `SELECT rut_key, reason, blocked_by, blocked_at FROM subject_blocks ORDER BY length(rut_key), rut_key`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SubjectBlock
	for rows.Next() {
		var b SubjectBlock
		if err := rows.Scan(&b.Key, &b.Reason, &b.By, &b.At); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// SubjectIDs are the ids a person is known by.
type SubjectIDs struct {
	Clients         []int64 // in clients, or as recorded on a contract
	ClientContracts []int64 // the contracts of those clients
	Payers          []int64 // the contracts whose recorded payer the person is
	Users           []int64
	Names           []string // the users' names
}

// SubjectIDsOf returns the ids of the person whose RUT's key is key.
func SubjectIDsOf(ctx context.Context, q Querier, key string) (SubjectIDs, error) {
	var ids SubjectIDs
	err := q.QueryRow(ctx, `WITH client AS (
    SELECT id FROM clients WHERE rut_key(rut) = $1
    UNION SELECT client_id FROM contracts WHERE rut_key(client_rut) = $1)
SELECT ARRAY(SELECT id FROM client),
  ARRAY(SELECT k.id FROM contracts k WHERE k.client_id IN (SELECT id FROM client)),
  ARRAY(SELECT id FROM contracts WHERE rut_key(payer_rut) = $1),
  ARRAY(SELECT id FROM users WHERE rut_key(rut) = $1),
  ARRAY(SELECT name FROM users WHERE rut_key(rut) = $1)`, key).Scan(&ids.Clients, &ids.ClientContracts, &ids.Payers, &ids.Users, &ids.Names)
	return ids, err
}

// SubjectRecord is an audit record that carried persons, or may have (an
// open one), as [SubjectRecords] reads it.
type SubjectRecord struct {
	Started                                            time.Time
	Ended                                              *time.Time
	RequestID, Principal, ClientAddress, Path, Dataset string
	Columns                                            string
	Outcome                                            string // "unfinished" for an open record
	Subjects                                           []byte // nil for an open record
}

// SubjectRecords calls each with every audit record started since since
// that carried persons or is still open, in the order they started; it
// stops at, and returns, each's first error.
func SubjectRecords(ctx context.Context, q Querier, since time.Time, each func(SubjectRecord) error) error {
	rows, err := q.Query(ctx, `SELECT started_at, ended_at, request_id, principal, coalesce(client_address, ''), path,
  coalesce(dataset, ''), coalesce(columns, ''), CASE WHEN outcome = 'open' THEN 'unfinished' ELSE outcome END, subjects
FROM audit_records WHERE (subjects IS NOT NULL OR outcome = 'open') AND started_at >= $1 ORDER BY started_at, id`, since)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r SubjectRecord
		if err := rows.Scan(&r.Started, &r.Ended, &r.RequestID, &r.Principal, &r.ClientAddress, &r.Path, &r.Dataset, &r.Columns, &r.Outcome, &r.Subjects); err != nil {
			return err
		}
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
