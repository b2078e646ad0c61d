package store

import (
	"fmt"
	"math"
	"testing"
)

// jobKeyFmt is the job key as it was first written, with fmt.
func jobKeyFmt(record, promptID int32, model string, topP float64, hasTopP bool, n int32) string {
	t := "-"
	if hasTopP {
		t = fmt.Sprintf("%g", topP)
	}
	return fmt.Sprintf("%d/%d/%s/%s/%d", record, promptID, model, t, n)
}

func TestJobKeyAsFmt(t *testing.T) {
	for _, p := range []float64{1, 0, 0.5, 0.1 + 0.2, 1e-7, 1e21, 123456789, 1e6, 1e-5, 0.95, math.Copysign(0, -1), math.Inf(1), math.NaN()} {
		for _, has := range []bool{true, false} {
			got, want := JobKey(12, 3, "gpt-6-luna", p, has, 2), jobKeyFmt(12, 3, "gpt-6-luna", p, has, 2)
			if got != want {
				t.Fatalf("JobKey = %q, fmt gives %q", got, want)
			}
		}
	}
}

func FuzzJobKeyAsFmt(f *testing.F) {
	f.Add(int32(1), int32(1), "m", 1.0, true, int32(1))
	f.Fuzz(func(t *testing.T, record, prompt int32, model string, topP float64, has bool, n int32) {
		if got, want := JobKey(record, prompt, model, topP, has, n), jobKeyFmt(record, prompt, model, topP, has, n); got != want {
			t.Fatalf("JobKey = %q, fmt gives %q", got, want)
		}
	})
}
