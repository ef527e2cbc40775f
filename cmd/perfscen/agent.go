package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/fleet"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/scenariorun"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/scenario"
)

func init() { register(newAgentCmd) }

// clockSkewEnv injects a clock offset into an agent: a fault for tests of
// the clock alignment, never needed in a real run.
const clockSkewEnv = "PERFSCEN_AGENT_CLOCK_SKEW"

func newAgentCmd(e *env) *cobra.Command {
	var (
		coordinator    string
		index          int
		name           string
		tokenFile      string
		joinTimeout    time.Duration
		connectTimeout time.Duration
		tlsCA, tlsCert string
		tlsKey, tlsSN  string
		set            []string
	)
	cmd := &cobra.Command{
		Use:   "agent --coordinator HOST:PORT FILE",
		Short: "Generate a share of a distributed run's load for its coordinator (perfscen run --agents)",
		Long: `agent dials the coordinator (perfscen run --agents N on another host), proves
itself with the shared token or its client certificate (mutual TLS),
reaches the scenario's servers and then runs the sessions the
coordinator starts: its share of each point's concurrency
or request rate, on the coordinator's clock, sending every window's
latency histogram and counters back. The coordinator decides everything;
the agent prints no report.

The agent needs no inbound port. It must run the coordinator's perfscen
version with the same scenario file, --set overrides and input data
(same hashes), else it is refused; a build without a release version
(dev, or from modified sources) must be the same binary (same digest).
Its index is --index, else $JOB_COMPLETION_INDEX (a Kubernetes Indexed
Job), else the coordinator's choice.

Exit codes: 0 the run finished · 2 refused (token, TLS certificate,
version, scenario, overrides, input data, index) or invalid scenario ·
3 the coordinator or the server could not be reached, or the
coordinator was lost (the agent stops its load on its own
after three missed heartbeats).`,
		Example: `  PERFSCEN_AGENT_TOKEN=… perfscen agent --coordinator coordinator.perf.svc:7700 scenario.yaml
  perfscen agent --coordinator 10.0.0.5:7700 --index 2 --token-file /var/run/secrets/perfscen/token scenario.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if coordinator == "" {
				return usageError(cmd, fmt.Errorf("--coordinator is required"))
			}
			// The coordinator's --set flags, given again here: the agent
			// builds the same plan, and the coordinator refuses an agent
			// whose overrides differ from its own.
			pl, err := scenario.LoadPlanWith(args[0], e.getenv, set)
			if err != nil {
				printScenarioError(e, args[0], err)
				return exitSilently(exitcode.Invalid)
			}
			if err := engine.CheckDistributed(pl, 1); err != nil {
				return exitcode.AsInvalid(fmt.Errorf("%s: %w", args[0], err))
			}
			token, err := fleet.LoadToken(tokenFile, e.getenv)
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			if !cmd.Flags().Changed("index") {
				if v := e.getenv("JOB_COMPLETION_INDEX"); v != "" {
					if index, err = strconv.Atoi(v); err != nil {
						return exitcode.AsInvalid(fmt.Errorf("JOB_COMPLETION_INDEX %q: %w", v, err))
					}
				}
			}
			var skew time.Duration
			if v := e.getenv(clockSkewEnv); v != "" {
				if skew, err = time.ParseDuration(v); err != nil {
					return exitcode.AsInvalid(fmt.Errorf("%s: %w", clockSkewEnv, err))
				}
			}
			tlsCfg, err := fleet.ClientTLS(tlsCA, tlsCert, tlsKey, tlsSN)
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			id, err := e.fleetVersion()
			if err != nil {
				return failure.Env(err)
			}
			host, _ := os.Hostname()
			if name == "" {
				name = host
			}
			err = fleet.RunAgent(e.ctx, fleet.AgentOptions{
				Coordinator: coordinator, Index: index, Name: name, Host: host, Token: token,
				Version: id, Plan: pl, JoinTimeout: joinTimeout, Log: e.stderr, Net: e.net,
				Clock: fleet.NewClock(skew), TLS: tlsCfg,
				Open: func(ctx context.Context) (map[string]kinds.Server, func(), error) {
					servers, _, closeAll, err := scenariorun.OpenServers(ctx, pl, kinds.Env{ConnectTimeout: connectTimeout, Net: e.net})
					return servers, closeAll, err
				},
			})
			if err != nil {
				return err
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&coordinator, "coordinator", "", "the coordinator's host:port (required)")
	fl.IntVar(&index, "index", -1, "this agent's index (default: $JOB_COMPLETION_INDEX, else the coordinator chooses)")
	fl.StringVar(&name, "name", "", "this agent's name in the coordinator's messages (default: the host name)")
	fl.StringVar(&tokenFile, "token-file", "", "file holding the shared agent token (default: $"+fleet.TokenEnv+")")
	fl.DurationVar(&joinTimeout, "join-timeout", fleet.DefaultJoinTimeout, "how long to keep trying to reach the coordinator before exit 3")
	fl.DurationVar(&connectTimeout, "connect-timeout", runner.DefaultConnectTimeout, "how long to wait for the server to answer ready before exit 3")
	fl.StringArrayVar(&set, "set", nil, "path=value override of the scenario, as the coordinator's perfscen run --set (repeatable; the same flags in the same order, else refused)")
	fl.StringVar(&tlsCA, "tls-ca", "", "dial the coordinator over TLS, verifying it with this PEM CA")
	fl.StringVar(&tlsCert, "tls-cert", "", "PEM client certificate for a coordinator that requires one (mutual TLS)")
	fl.StringVar(&tlsKey, "tls-key", "", "PEM key of --tls-cert")
	fl.StringVar(&tlsSN, "tls-server-name", "", "the name the coordinator's certificate must carry (default: the host of --coordinator)")
	return cmd
}
