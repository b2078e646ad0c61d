package engine

import (
	"math"
	"math/rand"
	"net/http"
	"strconv"
	"time"
)

// maxHonouredWait caps how long a server may ask us to wait before one retry.
const maxHonouredWait = 5 * time.Minute

// retryAfter reads the standard wait headers: retry-after-ms, then Retry-After in seconds or as
// an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms >= 0 {
		return capWait(time.Duration(ms * float64(time.Millisecond))), true
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return capWait(time.Duration(s * float64(time.Second))), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return capWait(d), true
	}
	return 0, false
}

func capWait(d time.Duration) time.Duration {
	if d > maxHonouredWait {
		return maxHonouredWait
	}
	return d
}

// defaultBackoff is httr2's default: full jitter between 1 and 2^failures seconds, capped at 60.
func defaultBackoff(failures int, rng *rand.Rand) time.Duration {
	hi := math.Min(math.Pow(2, float64(failures)), 60)
	s := 1.0
	if hi > 1 {
		s = 1 + rng.Float64()*(hi-1)
	}
	return time.Duration(s * float64(time.Second))
}
