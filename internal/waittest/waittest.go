// Package waittest runs the tests of a package that spend their time
// waiting (on raft and gossip timeouts, on other processes, on schedules)
// rather than computing: their parallel tests may run more at once than
// GOMAXPROCS, go test's default for -parallel.
package waittest

import (
	"flag"
	"strconv"
	"testing"
)

// Parallel is how many parallel tests Main lets run at once.
const Parallel = 8

// Main runs m with -parallel set to Parallel unless the command line gives
// it, and returns m's exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(waittest.Main(m)) }
func Main(m *testing.M) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(Parallel)); err != nil {
			panic(err)
		}
	}
	return m.Run()
}
