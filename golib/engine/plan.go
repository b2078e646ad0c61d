package engine

import "github.com/tabscreen/tabscreen/golib/store"

// Holding is what the answer store at path holds of the run a call with these options and records
// would continue (screen_plan(), and the estimate of a resumed run): nothing is claimed or sent.
func Holding(path string, opts *Options, recs Records) (store.Holding, error) {
	st, err := store.Open(path)
	if err != nil {
		return store.Holding{}, err
	}
	defer st.Close()
	return st.Holding(fingerprint(opts, recs))
}
