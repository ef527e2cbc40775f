package schemas_test

import (
	"encoding/json"
	"fmt"

	"github.com/perfscen/perfscen/schemas"
)

// Check a scenario document against the published JSON Schema, as an
// editor or a pre-commit hook would.
func ExampleScenarioSchema() {
	s, err := schemas.ScenarioSchema()
	if err != nil {
		fmt.Println(err)
		return
	}
	var doc any
	_ = json.Unmarshal([]byte(`{"version": 1, "server": {"embedded": true}, "models": [{"name": "simple"}]}`), &doc)
	fmt.Println(s.Validate(doc) == nil)
	_ = json.Unmarshal([]byte(`{"version": 2, "models": []}`), &doc)
	fmt.Println(s.Validate(doc) == nil)
	// Output:
	// true
	// false
}
