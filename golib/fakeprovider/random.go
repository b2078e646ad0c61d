package fakeprovider

import (
	"math"
)

// Every pseudo-random draw is a pure function of a few integers (the
// configured seed, a request sequence number or a record's occurrence count,
// a salt): no shared generator, no lock, reproducible.

// mix64 is the SplitMix64 finaliser.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hash combines values into one 64-bit hash.
func hash(vals ...uint64) uint64 {
	h := uint64(0x243f6a8885a308d3)
	for _, v := range vals {
		h = mix64(h ^ v)
	}
	return h
}

// hashString is FNV-1a (stable across processes, unlike maphash).
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 {
	return float64(h>>11) / (1 << 53)
}

// normal returns a standard normal deviate from two hashes (Box-Muller).
func normal(h1, h2 uint64) float64 {
	u1 := 1 - unit(h1) // (0, 1]
	u2 := unit(h2)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// Salts that keep the draws of different purposes independent.
const (
	saltFault uint64 = iota + 1
	saltLatency1
	saltLatency2
	saltAnswer
	saltID
	saltTendency
)

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomID returns prefix followed by n characters drawn from h.
func randomID(prefix string, n int, h uint64) string {
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	var cur uint64
	for i := len(prefix); i < len(b); i++ {
		if (i-len(prefix))%8 == 0 { // 62^8 < 2^64: eight characters per mix
			cur = mix64(h + uint64(i))
		}
		b[i] = idAlphabet[cur%uint64(len(idAlphabet))]
		cur /= uint64(len(idAlphabet))
	}
	return string(b)
}
