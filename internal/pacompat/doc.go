// Package pacompat runs perf_analyzer command lines (r24.05) through
// perfscen: it parses perf_analyzer's flags with perf_analyzer's own rules
// (getopt_long, so unambiguous prefixes of long options work, and its
// per-flag and cross-flag checks with its messages), turns them into the
// equivalent scenario, and prints the figures in perf_analyzer's console
// and CSV formats. Flags perfscen cannot honour are refused by name, never
// dropped, so a migrated script measures what it says or stops.
package pacompat
