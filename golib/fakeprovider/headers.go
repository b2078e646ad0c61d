package fakeprovider

import "net/http"

// Every answer carries a dozen headers, set twice (the rate-limit headers are set on arrival and
// again with what the answer took). http.Header.Set canonicalises its key and allocates a slice
// per value each time; the keys below are canonicalised once and setHeaders allocates once for
// all values. What the client receives is the same.

// canonicalKeys returns the keys as http.Header.Set would store them.
func canonicalKeys(keys ...string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = http.CanonicalHeaderKey(k)
	}
	return out
}

// setHeaders sets keys[i] (canonical) to values[i], as h.Set(keys[i], values[i]) does.
func setHeaders(h http.Header, keys []string, values ...string) {
	vals := make([]string, len(values))
	copy(vals, values)
	for i, k := range keys {
		h[k] = vals[i : i+1 : i+1]
	}
}
