package manifest

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// plainConfig is Config without its methods, for encoding/json.
type plainConfig Config

// MarshalJSON writes the config with expected_status in the form it was
// given: an integer, a class ("2xx") or a list of both.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		plainConfig
		ExpectedStatus any `json:"expected_status,omitempty"`
	}{plainConfig(c), expectedStatusValue(c)})
}

// UnmarshalJSON reads what MarshalJSON writes (the API's answers, read
// by the Go client). It does not validate: Parse does.
func (c *Config) UnmarshalJSON(b []byte) error {
	var v struct {
		plainConfig
		ExpectedStatus json.RawMessage `json:"expected_status"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Config(v.plainConfig)
	c.ExpectedStatus, c.ExpectedStatuses = nil, nil
	if len(v.ExpectedStatus) == 0 || isNull(v.ExpectedStatus) {
		return nil
	}
	items := []json.RawMessage{v.ExpectedStatus}
	if v.ExpectedStatus[0] == '[' {
		if err := json.Unmarshal(v.ExpectedStatus, &items); err != nil {
			return err
		}
	}
	for _, it := range items {
		s, ok := statusItem(it)
		if !ok {
			return fmt.Errorf("expected_status: %s is not a status or class", excerpt(it))
		}
		c.ExpectedStatuses = append(c.ExpectedStatuses, s)
	}
	if n, err := strconv.Atoi(c.ExpectedStatuses[0]); err == nil && len(c.ExpectedStatuses) == 1 && v.ExpectedStatus[0] != '[' {
		c.ExpectedStatus, c.ExpectedStatuses = &n, nil
	}
	return nil
}
