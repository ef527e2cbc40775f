package inputdata

import (
	"fmt"
	"strings"
)

// Error is a mismatch between the input data and the model, or a malformed
// input file. Fields that do not apply are zero (Stream, Step: -1). The CLI
// maps it to the invalid-input exit code.
type Error struct {
	File         string // input file or directory; empty for generated data
	Line, Column int    // 1-based position in File when the fault is in a JSON file
	Validation   bool   // the fault is in "validation_data" rather than "data"
	Stream       int    // stream index for multi-stream data, else -1
	Step         int    // step index (0-based, as perf_analyzer counts), else -1
	Tensor       string // input or output name
	Expected     string // what the model or the format requires
	Found        string // what the data holds
	Msg          string // a complete description when Expected/Found do not fit
	Err          error  // underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	var where []string
	if e.Stream >= 0 {
		where = append(where, fmt.Sprintf("stream %d", e.Stream))
	}
	if e.Step >= 0 {
		where = append(where, fmt.Sprintf("step %d", e.Step))
	}
	if e.Validation && len(where) > 0 {
		where[0] = "validation_data " + where[0]
	} else if e.Validation {
		where = append(where, "validation_data")
	}
	if e.Tensor != "" {
		where = append(where, "tensor "+e.Tensor)
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, ", "))
		b.WriteString(": ")
	}
	switch {
	case e.Msg != "":
		b.WriteString(e.Msg)
	case e.Expected != "" || e.Found != "":
		fmt.Fprintf(&b, "expected %s, found %s", e.Expected, e.Found)
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	}
	if e.Err != nil && (e.Msg != "" || e.Expected != "") {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// loc says where in the input a tensor came from; it builds Errors.
type loc struct {
	file       string
	src        []byte // JSON source, nil for binary files
	validation bool
	stream     int
	step       int
	tensor     string
}

func (l loc) err(at *value, expected, found string) *Error {
	e := l.base(at)
	e.Expected, e.Found = expected, found
	return e
}

func (l loc) errf(at *value, format string, args ...any) *Error {
	e := l.base(at)
	e.Msg = fmt.Sprintf(format, args...)
	return e
}

func (l loc) base(at *value) *Error {
	e := &Error{File: l.file, Validation: l.validation, Stream: l.stream, Step: l.step, Tensor: l.tensor}
	if at != nil && l.src != nil {
		e.Line, e.Column = lineCol(l.src, at.start)
	}
	return e
}

// noLoc is the location of generated data, which has no file or step.
var noLoc = loc{stream: -1, step: -1}
