package refserver

// mlpOptimized is the tuned engine: samples are processed four at a time so
// each weight row is loaded once per block, and every dot product runs two
// independent accumulators so the adds are not one serial dependency chain.
func mlpOptimized(w *mlpWeights, x, y []float32, batch int, slowdown float64) {
	h := make([]float32, batch*mlpHidden)
	for rep := 0; rep < int(slowdown); rep++ {
		denseBatched(w.w1, w.b1, x, h, batch, mlpIn, mlpHidden, true)
		denseBatched(w.w2, w.b2, h, y, batch, mlpHidden, mlpOut, false)
	}
	extraRows(slowdown, batch, func(rows int) {
		scratch := make([]float32, batch*rows)
		denseBatched(w.w1[:rows*mlpIn], w.b1[:rows], x, scratch, batch, mlpIn, rows, true)
	})
}

// denseBatched computes y[n] = act(W·x[n] + b) for batch samples packed in
// x (nIn each) into y (nOut each). nIn must be even.
func denseBatched(w, b, x, y []float32, batch, nIn, nOut int, relu bool) {
	n := 0
	for ; n+4 <= batch; n += 4 {
		dense4(w, b, x[n*nIn:(n+4)*nIn], y, n, nIn, nOut, relu)
	}
	for ; n < batch; n++ {
		dense1(w, b, x[n*nIn:(n+1)*nIn], y[n*nOut:(n+1)*nOut], nIn, nOut, relu)
	}
}

func dense4(w, b, x, y []float32, n0, nIn, nOut int, relu bool) {
	x0 := x[0*nIn : 1*nIn : 1*nIn]
	x1 := x[1*nIn : 2*nIn : 2*nIn]
	x2 := x[2*nIn : 3*nIn : 3*nIn]
	x3 := x[3*nIn : 4*nIn : 4*nIn]
	for j := 0; j < nOut; j++ {
		row := w[j*nIn : (j+1)*nIn : (j+1)*nIn]
		var a0, a1, a2, a3, c0, c1, c2, c3 float32
		for i := 0; i+1 < len(row); i += 2 {
			r0, r1 := row[i], row[i+1]
			a0 += r0 * x0[i]
			c0 += r1 * x0[i+1]
			a1 += r0 * x1[i]
			c1 += r1 * x1[i+1]
			a2 += r0 * x2[i]
			c2 += r1 * x2[i+1]
			a3 += r0 * x3[i]
			c3 += r1 * x3[i+1]
		}
		bj := b[j]
		y[(n0+0)*nOut+j] = act(bj+a0+c0, relu)
		y[(n0+1)*nOut+j] = act(bj+a1+c1, relu)
		y[(n0+2)*nOut+j] = act(bj+a2+c2, relu)
		y[(n0+3)*nOut+j] = act(bj+a3+c3, relu)
	}
}

func dense1(w, b, x, y []float32, nIn, nOut int, relu bool) {
	x = x[:nIn:nIn]
	for j := 0; j < nOut; j++ {
		row := w[j*nIn : (j+1)*nIn : (j+1)*nIn]
		var a0, a1, a2, a3 float32
		i := 0
		for ; i+3 < len(row); i += 4 {
			a0 += row[i] * x[i]
			a1 += row[i+1] * x[i+1]
			a2 += row[i+2] * x[i+2]
			a3 += row[i+3] * x[i+3]
		}
		for ; i < len(row); i++ {
			a0 += row[i] * x[i]
		}
		y[j] = act(b[j]+(a0+a1)+(a2+a3), relu)
	}
}

func act(v float32, relu bool) float32 {
	if relu && v < 0 {
		return 0
	}
	return v
}
