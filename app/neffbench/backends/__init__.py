"""Compile backends, one class each: legacy torch_neuronx.trace (``neuron``), TorchNeuron (``torchneuron``) and
``cpu-check``; ``registry`` names them, ``choose`` resolves one in the worker."""
