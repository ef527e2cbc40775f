//go:build linux

package triton

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/perfscen/perfscen/internal/testbin"
	"github.com/perfscen/perfscen/internal/tritontest"
)

// The server every test of the package uses, and its folder.
var (
	tri    *tritontest.Server
	triDir string
	repo   string
)

// Models of the edited repository copy.
const (
	// delayMs is delay_fp32's delay_ms in the copy (the shipped 10 ms,
	// edited): what dynamic batching amortizes.
	delayMs = 20
	// ctlModel is identity_fp32 under another name, loaded and unloaded
	// by the model-control test alone.
	ctlModel = "identity_ctl"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer testbin.Cleanup()
	triDir = tritontest.Dir()
	if triDir == "" {
		fmt.Println(tritontest.SkipLine("test/triton (conformance and differential suites)"))
		return 0
	}
	tmp, err := os.MkdirTemp("", "perfscen-triton-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	repo = tmp + "/models"
	if err := prepareRepo(repo); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Explicit model control with every model loaded at start: the tests
	// measure all models and one of them loads and unloads its own.
	tri, err = tritontest.Start(context.Background(), tritontest.Options{Dir: triDir, Repo: repo,
		Args: []string{"--model-control-mode=explicit", "--load-model=*"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting Triton:", err)
		return 1
	}
	code := m.Run()
	if err := tri.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code != 0 {
		fmt.Fprintln(os.Stderr, "Triton's log:\n"+tri.Log())
	}
	return code
}

func prepareRepo(dst string) error {
	if err := tritontest.CopyRepo(triDir, dst); err != nil {
		return err
	}
	if err := tritontest.SetParameter(dst, "delay_fp32", "delay_ms", fmt.Sprint(delayMs)); err != nil {
		return err
	}
	return tritontest.CloneModel(dst, "identity_fp32", ctlModel)
}
