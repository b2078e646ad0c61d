package engine

import (
	"math"
	"math/rand"
	"time"
)

// defaultBackoff is httr2's default: full jitter between 1 and 2^failures seconds, capped at 60.
func defaultBackoff(failures int, rng *rand.Rand) time.Duration {
	hi := math.Min(math.Pow(2, float64(failures)), 60)
	s := 1.0
	if hi > 1 {
		s = 1 + rng.Float64()*(hi-1)
	}
	return time.Duration(s * float64(time.Second))
}
