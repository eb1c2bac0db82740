package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// CPUProfile fetches a CPU profile of node i over d from its pprof
// endpoint (behind the admin token) and writes it to path. It blocks for
// d; run it beside the load.
func (c *Cluster) CPUProfile(ctx context.Context, i int, d time.Duration, path string) error {
	url := fmt.Sprintf("http://%s/admin/v1/debug/pprof/profile?seconds=%d", c.URLs[i], max(1, int(d.Seconds())))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cpu profile: status %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
