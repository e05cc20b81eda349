"""The fake ``torch.compile`` backend "neuron" (see ``backend.py``)."""
