//go:build !race

package fakeprovider

const raceEnabled = false
