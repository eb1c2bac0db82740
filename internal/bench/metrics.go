package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Scrape reads the /metrics of the process at addr (host:port) into
// sample -> value, a sample being written as the text format writes it:
// the name with its labels, e.g. lookout_raft_apply_duration_seconds_count{result="ok"}.
// token, when not empty, is sent as a bearer token.
func Scrape(ctx context.Context, addr, token string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return ParseMetrics(bufio.NewScanner(resp.Body))
}

// ParseMetrics reads samples of the Prometheus text format from sc, as
// Scrape does. Comments and lines without a number are skipped.
func ParseMetrics(sc *bufio.Scanner) (map[string]float64, error) {
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	out := map[string]float64{}
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}
