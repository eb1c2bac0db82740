package badgerutil

import (
	"errors"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
)

// DefaultGCInterval is how often value-log GC runs unless told otherwise.
const DefaultGCInterval = 5 * time.Minute

// DefaultGCDiscardRatio is the share of a value-log file that must be
// garbage before GC rewrites it.
const DefaultGCDiscardRatio = 0.5

// StartGC runs Badger's value-log GC on db every interval, repeating while a
// file was rewritten, until the returned stop function is called (stop
// waits for the goroutine). Badger never collects its value log by itself.
func StartGC(db *badger.DB, interval time.Duration, ratio float64, logger hclog.Logger) (stop func()) {
	logger = loggerOrNull(logger)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			for {
				err := db.RunValueLogGC(ratio)
				if err != nil {
					if !errors.Is(err, badger.ErrNoRewrite) {
						logger.Warn("value log GC failed", "error", err)
					}
					break
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
