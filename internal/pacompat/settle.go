package pacompat

// settle is what perf_analyzer decides once it knows the model, before it
// prints its settings (perf_analyzer.cc, CreateAnalyzerObjects): a sequence
// model is called asynchronously unless --sync is given, and a synchronous
// open concurrency range (end 0, with -l) ends at --max-threads, since each
// of its threads holds one request.
func (p *Params) settle() error {
	p.Warnings = nil
	if p.SequenceModel && p.BatchSize > 1 {
		return usage("can not specify batch size > 1 when using a sequence model")
	}
	if !p.TargetsConcurrency() {
		return nil
	}
	open := p.Concurrency.End == noLimit || p.cappedAtMaxThreads
	if p.SequenceModel && open && p.IsAsync() {
		return usage("The 'end' concurrency can not be 0 for sequence models when using asynchronous API.")
	}
	switch {
	case !p.IsAsync() && open:
		p.Warnings = append(p.Warnings, "WARNING: The maximum attainable concurrency will be limited by max_threads specification.")
		p.Concurrency.End = uint64(p.MaxThreads)
		p.cappedAtMaxThreads = true
	case !p.IsAsync() && p.MaxThreadsSpecified:
		p.Warnings = append(p.Warnings, "WARNING: Overriding max_threads specification to ensure requested concurrency range.")
	}
	return nil
}

// SetSequenceModel settles the command line for a model whose
// configuration has a sequence batcher, as perf_analyzer does after reading
// it: requests carry correlation ids with start and end flags, sent
// asynchronously unless --sync is given; a batch size over 1 is refused.
func (p *Params) SetSequenceModel() error {
	p.SequenceModel = true
	return p.settle()
}

// IsAsync says requests are sent asynchronously: -a, --streaming (always
// asynchronous), or a sequence model without --sync.
func (p *Params) IsAsync() bool {
	return p.Async || p.Streaming || p.SequenceModel && !p.ForcedSync
}

// sequences says requests go out in sequences: the model has a sequence
// batcher, or a sequence flag says so.
func (p *Params) sequences() bool { return p.SequenceModel || p.sequenceFlags() }
