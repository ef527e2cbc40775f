# FP32 [batch, 64] -> FP32 [batch, 64]: `cpu_layers` dense layers with
# tanh (weights fixed by a seed, so every server computes the same
# function), then a wait of `device_ms` per execution, as a GPU model's
# host thread waits for its device. Both are config.pbtxt parameters.
import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        params = json.loads(args["model_config"])["parameters"]
        self.layers = int(params["cpu_layers"]["string_value"])
        self.device_s = float(params["device_ms"]["string_value"]) / 1000.0
        rng = np.random.default_rng(0)
        self.w = (rng.standard_normal((64, 64)) / 8.0).astype(np.float32)
        self.b = (rng.standard_normal(64) / 8.0).astype(np.float32)

    def execute(self, requests):
        responses = []
        for request in requests:
            y = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            for _ in range(self.layers):
                y = np.tanh(y @ self.w + self.b)
            responses.append(pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("OUTPUT0", y.astype(np.float32))]))
        if self.device_s > 0:
            time.sleep(self.device_s)
        return responses
