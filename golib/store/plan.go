package store

import (
	"database/sql"
	"errors"
)

// Holding is what the store holds of the latest run with a fingerprint, for a plan before a run:
// its id and status and, per model, the jobs it answered. RunID is "" when there is none.
type Holding struct {
	RunID    string         `json:"run_id"`
	Status   string         `json:"status"`
	Answered map[string]int `json:"answered"`
}

// Holding reads, without claiming anything, the run a call with this fingerprint would continue
// (the same query as Claim's).
func (s *Store) Holding(fingerprint string) (Holding, error) {
	h := Holding{Answered: map[string]int{}}
	err := s.db.QueryRow(`SELECT run_id, status FROM runs WHERE fingerprint = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`,
		fingerprint).Scan(&h.RunID, &h.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, storeError(s.Path, "cannot be read", err)
	}
	rows, err := s.db.Query(`SELECT model, COUNT(*) FROM answers WHERE run_id = ? AND answered = 1 GROUP BY model`, h.RunID)
	if err != nil {
		return h, storeError(s.Path, "cannot be read", err)
	}
	defer rows.Close()
	for rows.Next() {
		var model string
		var n int
		if err := rows.Scan(&model, &n); err != nil {
			return h, storeError(s.Path, "cannot be read", err)
		}
		h.Answered[model] = n
	}
	if err := rows.Err(); err != nil {
		return h, storeError(s.Path, "cannot be read", err)
	}
	return h, nil
}
