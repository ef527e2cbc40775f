// Package tfserving is the TensorFlow Serving service kind: Predict over
// gRPC (tensorflow.serving.PredictionService, port 8500) or the REST API
// (POST /v1/models/NAME:predict on 8501, "instances" row or "inputs"
// columnar format), with the model's status and signature read before any
// load, inputs built from the signature, outputs decoded and validated,
// and the server's own figures from its Prometheus endpoint when
// metrics_url names it. Its embedded flavour (flavour.go) serves the
// reference server's built-in models through TF Serving's APIs.
package tfserving
