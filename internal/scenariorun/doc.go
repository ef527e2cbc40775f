// Package scenariorun carries one scenario plan from servers to verdict:
// it opens every server through its kind, hands them to the engine, and
// decides the checks in sequential looks while the servers are still up,
// so inconclusive checks get more trials before the verdict. It is the
// shell both the public runner package and the perfscen command stand on.
package scenariorun
